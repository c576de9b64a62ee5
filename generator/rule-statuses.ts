/**
 * The statuses named rules are answered with (errors.yaml `http-status`, `report-status`), checked
 * against the operations: a rule applies to payload kinds (`applies-to`), an operation has its
 * own (its x-adxkit-payload-kind, and its operationId in kebab case: billingEvent →
 * billing-event). Every operation a rule with an http-status applies to must declare that
 * response, so the service, the OpenAPI documents and the docs' status tables say the same.
 */
import type { ApiModel, ErrorsModel, NamedRuleModel, OperationModel } from "./model.js";
import { kebab } from "./names.js";

/** The kinds an operation's rules are declared for. */
export const operationKinds = (op: OperationModel): string[] =>
  [...new Set([op.payloadKind, kebab(op.operationId)])].filter((k): k is string => k !== undefined);

/**
 * The operations adxkit serves that a rule applies to: not the ones bidders serve (an address of
 * their own, like POST /bid) or the notices the exchange calls.
 */
export function operationsOfRule(rule: NamedRuleModel, apis: readonly ApiModel[]): OperationModel[] {
  return apis
    .flatMap((api) => api.operations)
    .filter((op) => !op.webhook && op.servers.length === 0 && operationKinds(op).some((kind) => rule.appliesTo.includes(kind)));
}

/** Adds a problem for each status a rule declares that its operations or the report statuses do not have. */
export function checkRuleStatuses(errors: ErrorsModel, apis: readonly ApiModel[], problems: string[]): void {
  for (const rule of errors.namedRules) {
    const where = `errors.yaml: validation-rules ${rule.id}`;
    if (rule.reportStatus !== undefined && !errors.reportStatus.some((s) => s.code === rule.reportStatus)) {
      problems.push(`${where}: report-status ${rule.reportStatus} is not a code of report-status`);
    }
    if (rule.httpStatus === undefined) continue;
    const operations = operationsOfRule(rule, apis);
    if (operations.length === 0) problems.push(`${where}: http-status ${rule.httpStatus}, but it applies to no operation (applies-to ${rule.appliesTo.join(", ")})`);
    for (const op of operations) {
      if (!op.responses.some((r) => r.status === String(rule.httpStatus))) {
        problems.push(`${where}: http-status ${rule.httpStatus}, but ${op.method} ${op.path} (${op.operationId}), which it applies to, declares no ${rule.httpStatus} response`);
      }
    }
  }
}
