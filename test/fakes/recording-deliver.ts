import type { Deliver, DeliveryRequest } from "../../src/delivery/delivery-request.js";

/** A `deliver` that keeps every request it is handed (`delivered`, in order) and answers each delivered at once. */
export function recordingDeliver() {
  const delivered: DeliveryRequest[] = [];
  const deliver: Deliver = async (request) => {
    delivered.push(request);
    return { status: "delivered", messageIds: [] };
  };
  return { delivered, deliver };
}
