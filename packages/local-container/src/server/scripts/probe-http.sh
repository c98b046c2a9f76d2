#!/bin/bash
# Whether an HTTP server inside the container answers: sends a GET with bash's /dev/tcp, in the container's
# own network namespace, and prints the status line (see port-watch-route.ts). Exit status 1: no answer.
#
#   probe-http.sh <port> <path>
exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: localhost:%s\r\nConnection: close\r\n\r\n' "$2" "$1" >&3
IFS= read -r line <&3 || exit 1
printf '%s' "$line"
