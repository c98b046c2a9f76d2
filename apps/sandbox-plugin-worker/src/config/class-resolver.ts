import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { type InstanceType, covers, instanceTypeLabel, resourcesOf } from "./instance-types.js";
import type { SandboxClass } from "./plugin-config.js";

function order(a: SandboxClass, b: SandboxClass): number {
  const left = resourcesOf(a.instanceType);
  const right = resourcesOf(b.instanceType);
  return left.vcpu - right.vcpu || left.memoryMib - right.memoryMib || left.diskMb - right.diskMb;
}

/**
 * Picks the container application for a template image and a requested size: the class with exactly
 * that instance type, else the smallest configured one that covers it. An image no class runs, or a size
 * no class covers, is `invalid_request`: Cloudflare fixes image and instance type per application.
 */
export function resolveSandboxClass(
  classes: readonly SandboxClass[],
  image: string,
  size: InstanceType,
): SandboxClass {
  const forImage = classes.filter((entry) => entry.image === image);
  if (forImage.length === 0) {
    throw new InvalidRequestError({
      message: `unknown image ${image}: no container application of this Worker runs it`,
      context: { image, knownImages: [...new Set(classes.map((entry) => entry.image))] },
    });
  }
  const label = instanceTypeLabel(size);
  const exact = forImage.find((entry) => instanceTypeLabel(entry.instanceType) === label);
  if (exact !== undefined) return exact;
  const fitting = forImage
    .filter((entry) => covers(resourcesOf(entry.instanceType), resourcesOf(size)))
    .sort(order);
  const chosen = fitting[0];
  if (chosen === undefined) {
    throw new InvalidRequestError({
      message: `no container application for image ${image} is as large as ${label}`,
      context: {
        image,
        size: label,
        instanceTypes: forImage.map((entry) => instanceTypeLabel(entry.instanceType)),
      },
    });
  }
  return chosen;
}
