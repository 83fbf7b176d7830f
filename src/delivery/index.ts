export * from "./channel-adapter.js";
export * from "./chunk-text.js";
export * from "./delivery-gate.js";
export * from "./delivery-request.js";
export * from "./outbox-item.js";
export * from "./outbox.js";
export * from "./retry-delay.js";
export * from "./send-policy.js";
