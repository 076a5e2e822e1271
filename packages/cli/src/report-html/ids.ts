/** Element ids the renderer writes and the page reads. */
export const PAYLOAD_ELEMENT_ID = "dsv4kv-data";
export const ROOT_ELEMENT_ID = "dsv4kv-root";
