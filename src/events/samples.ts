// What the event catalog's samples share (src/<feature>/event-types.ts): one consistent sandbox
// tenant's day, so that a sample of one feature's event names the resources of another's.
export const SAMPLE_AT = '2026-11-25T09:30:00.000Z';
export const SAMPLE_LATER = '2026-11-25T09:30:02.000Z';
export const SAMPLE_TRANSFER_ID = '5f1c2a9e-3b7d-4c1e-9a2f-6d8e0b4c7a11';
export const SAMPLE_CARD_ID = '9b2e4f6a-1c3d-4e5f-8a7b-0c1d2e3f4a5b';
export const SAMPLE_ENDPOINT_ID = 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b';
export const SAMPLE_CUSTOMER_REFERENCE = 'cus_1001';
