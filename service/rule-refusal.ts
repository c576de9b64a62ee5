/**
 * An operation's answer to a request that breaks a named rule: the HTTP status the spec declares
 * for the rule (errors.yaml http-status, checked against the operations by the generator) and
 * the interface's error form. The status is never written beside the rule in code.
 */
import { ruleHttpStatus } from "@adxkit/bindings";
import type { OperationOutput } from "@adxkit/bindings/fastify";

/** The HTTP status of a rule; a rule without one is a programming error. */
export function httpStatusOf(rule: string): number {
  const status = ruleHttpStatus[rule];
  if (status === undefined) throw new Error(`rule ${rule} declares no http-status in spec/errors.yaml`);
  return status;
}

/** `{ status, headers, body: { errors: [{ path, rule, message }] } }` for a broken rule. */
export function ruleRefusal(rule: string, message: string, options: { path?: string; headers?: Record<string, string> } = {}): OperationOutput {
  return { status: httpStatusOf(rule), ...(options.headers ? { headers: options.headers } : {}), body: { errors: [{ path: options.path ?? "", rule, message }] } };
}
