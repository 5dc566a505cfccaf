/** The wire formats this package decodes (for errors, logs and metrics). */
export type AgentProtocol =
  | 'prometheus_remote_write_v1'
  | 'prometheus_remote_write_v2'
  | 'prometheus_remote_read'
  | 'otlp_metrics_protobuf'
  | 'otlp_metrics_json'
  | 'influx_line_protocol'
  | 'collectd_json';

/**
 * Why a whole body was refused. `malformed_body`: it is not a message of the protocol (the
 * gateway answers 400, which remote-write senders read as "do not retry"). `body_too_large`: its
 * decompressed size, as the compressed stream declares it, is above the limit (413); nothing was
 * decompressed.
 */
export type ProtocolErrorCode = 'malformed_body' | 'body_too_large';

/**
 * A body that cannot be decoded at all. Points that merely cannot be taken are never thrown:
 * they are counted in `DecodedHostSamples.rejected`. Knows nothing of HTTP; `message` is
 * written for the agent's operator (it names the protocol and what is wrong, never our
 * internals). Never retriable: the same bytes fail the same way.
 */
export class ProtocolDecodeError extends Error {
  override readonly name: string = 'ProtocolDecodeError';
  readonly code: ProtocolErrorCode;
  readonly protocol: AgentProtocol;
  readonly retriable = false;

  constructor(
    code: ProtocolErrorCode,
    protocol: AgentProtocol,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.protocol = protocol;
  }
}

/** A line of line protocol that does not parse; `line` is 1-based, as editors count. */
export class LineProtocolSyntaxError extends ProtocolDecodeError {
  override readonly name = 'LineProtocolSyntaxError';
  readonly line: number;

  constructor(line: number, problem: string) {
    super('malformed_body', 'influx_line_protocol', `line ${line}: ${problem}`);
    this.line = line;
  }
}
