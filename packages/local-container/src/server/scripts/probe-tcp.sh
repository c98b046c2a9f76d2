#!/bin/bash
# Whether something inside the container listens on a port: connects with bash's /dev/tcp, in the
# container's own network namespace (see port-watch-route.ts). Exit status 0: it accepted.
#
#   probe-tcp.sh <port>
exec 3<>"/dev/tcp/127.0.0.1/$1"
