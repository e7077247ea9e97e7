// Search attributes every operation carries, so the Temporal UI's list reads like an operations
// log: filter by model, node or kind. scripts/services.sh registers them on the dev server.
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from "@temporalio/common";

export const MODEL_KEY = defineSearchAttributeKey("LlmgwModel", SearchAttributeType.KEYWORD);
export const NODE_KEY = defineSearchAttributeKey("LlmgwNode", SearchAttributeType.KEYWORD);
export const KIND_KEY = defineSearchAttributeKey("LlmgwKind", SearchAttributeType.KEYWORD);

export function operationSearchAttributes(model: string | null, kind: string, node?: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    ...(model ? [{ key: MODEL_KEY, value: model }] : []),
    { key: KIND_KEY, value: kind },
    ...(node ? [{ key: NODE_KEY, value: node }] : []),
  ]);
}
