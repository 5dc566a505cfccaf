import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { TargetAddressPolicy } from '@monitor/platform';

type HttpPostRequest = {
  url: URL;
  headers: Readonly<Record<string, string>>;
  body: Uint8Array;
  /** Aborts the exchange (the timeout). */
  signal: AbortSignal;
};

/**
 * Sends one POST without following redirects and resolves with the answer's status once its
 * head arrived (the body is not read). Rejects with `TargetRefusedError` for a target the
 * address policy refuses, with the network error otherwise, or with the signal's reason.
 * Injectable so unit tests need no network.
 */
export type HttpPostTransport = (request: HttpPostRequest) => Promise<{ status: number }>;

/** The target may not be contacted at all: trying again cannot help. */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
}

/**
 * The production transport (node:http and node:https). Every address is checked where the
 * connection is made: a host name through a DNS lookup that refuses a blocked answer and hands
 * the checked address to `connect`, so a name cannot resolve to another address in between
 * (DNS rebinding); an IP literal, which `connect` never looks up, before the request. No
 * socket is reused from a shared agent, since that one may not have been checked.
 */
export function createHttpPostTransport(policy: TargetAddressPolicy): HttpPostTransport {
  const lookup = guardedLookup(policy);
  return ({ url, headers, body, signal }) =>
    new Promise((resolve, reject) => {
      if (url.username !== '' || url.password !== '') {
        reject(new TargetRefusedError('the URL carries credentials'));
        return;
      }
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      if (isIP(host) !== 0) {
        const refusal = policy.refusalOf(host);
        if (refusal !== undefined) {
          reject(new TargetRefusedError(`${host} is ${refusal}`));
          return;
        }
      }
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(body.byteLength) },
          lookup,
          agent: false,
          signal,
        },
        (response: IncomingMessage) => {
          resolve({ status: response.statusCode ?? 0 });
          // Nothing of the body is kept (an answer may come from anywhere): close the socket.
          response.destroy();
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
}

/** `dns.lookup`, failing with `TargetRefusedError` when any answer is refused. */
function guardedLookup(policy: TargetAddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err !== null) {
        callback(err, '');
        return;
      }
      for (const { address } of addresses) {
        const refusal = policy.refusalOf(address);
        if (refusal !== undefined) {
          callback(new TargetRefusedError(`${hostname} resolves to ${address}, ${refusal}`), '');
          return;
        }
      }
      const [first] = addresses;
      // `connect` asks for every address when it tries both families (autoSelectFamily).
      if (options.all === true) callback(null, addresses);
      else if (first === undefined) callback(new Error(`${hostname} has no address`), '');
      else callback(null, first.address, first.family);
    });
  };
}
