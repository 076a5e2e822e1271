// STUB, to be replaced by the online c128 MTP bindings (issue 5).
export {};
