/**
 * The longest host (service) name anything accepts, in UTF-16 code units: the API contract's
 * limit for `/api/v1/ingest`, which every agent protocol, bus encoding and silence shares, so a
 * host stored through one path can be named through every other.
 */
export const maxHostNameLength = 255;
