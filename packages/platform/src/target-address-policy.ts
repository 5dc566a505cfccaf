import { isIP } from 'node:net';

/**
 * Which addresses Slack and webhook targets may reach. Targets come from tenants and the
 * notifier posts from inside the operator's network, so addresses that lead back into it are
 * refused unless the operator allowed their network.
 */
export interface TargetAddressPolicy {
  /**
   * Undefined when the notifier may connect to `address` (an IPv4 or IPv6 literal); otherwise
   * why not, e.g. `a loopback address`. Anything that is not an IP address is refused.
   */
  refusalOf(address: string): string | undefined;
}

/** An IP network: the address bytes (4 or 16) and how many leading bits are fixed. */
type Network = { bytes: Uint8Array; prefixBits: number };

/** Blocked ranges in match order (the first containing one names the refusal). */
const blockedRanges: readonly (readonly [cidr: string, description: string])[] = [
  // 0.0.0.0 reaches the local host on Linux.
  ['0.0.0.0/8', 'an unspecified address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (CGNAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'a reserved address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a reserved address'],
  ['224.0.0.0/4', 'a multicast address'],
  // Class E and the broadcast address.
  ['240.0.0.0/4', 'a reserved address'],
  ['::/128', 'an unspecified address'],
  ['::1/128', 'a loopback address'],
  // IPv4-compatible addresses (deprecated).
  ['::/96', 'a reserved address'],
  // Local-use NAT64 and discard-only.
  ['64:ff9b:1::/48', 'a reserved address'],
  ['100::/64', 'a reserved address'],
  ['fc00::/7', 'a private address'],
  ['fe80::/10', 'a link-local address'],
  // Site-local (deprecated): private in practice.
  ['fec0::/10', 'a private address'],
  ['ff00::/8', 'a multicast address'],
];

const blockedNetworks = blockedRanges.map(([cidr, description]) => ({
  network: parseNetwork(cidr)!,
  description,
}));

/**
 * IPv6 forms that lead to an IPv4 address, with the offset of its 4 bytes: IPv4-mapped
 * (`::ffff:a.b.c.d`, what dual-stack sockets connect with), IPv4-translated, NAT64 well-known
 * prefix, 6to4.
 */
const embeddingNetworks: readonly { network: Network; offset: number }[] = [
  { network: parseNetwork('::ffff:0:0/96')!, offset: 12 },
  { network: parseNetwork('::ffff:0:0:0/96')!, offset: 12 },
  { network: parseNetwork('64:ff9b::/96')!, offset: 12 },
  { network: parseNetwork('2002::/16')!, offset: 2 },
];

/**
 * A policy refusing loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 with the
 * cloud metadata endpoint, fe80::/10), unspecified, multicast, CGNAT (100.64/10) and reserved
 * addresses, also in IPv6 forms that embed one (IPv4-mapped, NAT64, 6to4); except in
 * `allowedNetworks` (CIDRs, or single addresses). Throws on an entry `isNetwork` rejects.
 */
export function createTargetAddressPolicy(allowedNetworks: readonly string[]): TargetAddressPolicy {
  const allowed = allowedNetworks.map((text) => {
    const network = parseNetwork(text);
    if (network === undefined) throw new Error(`not a CIDR network: ${text}`);
    return network;
  });
  return {
    refusalOf(text) {
      const address = parseAddress(text);
      if (address === undefined) return 'not an IP address';
      // An embedded IPv4 address is where the packets end up: judge that one.
      const effective = embeddedIpv4Of(address) ?? address;
      const isAllowed = allowed.some(
        (network) => contains(network, address) || contains(network, effective),
      );
      if (isAllowed) return undefined;
      return blockedNetworks.find(({ network }) => contains(network, effective))?.description;
    },
  };
}

/**
 * Whether `text` names a network `createTargetAddressPolicy` takes: `10.0.0.0/8`, `fd00::/8`,
 * or a single address (`127.0.0.1` is `127.0.0.1/32`).
 */
export function isNetwork(text: string): boolean {
  return parseNetwork(text) !== undefined;
}

/** Bits past the prefix are ignored; undefined for anything but a network or an address. */
function parseNetwork(text: string): Network | undefined {
  const [addressText = '', prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0) return undefined;
  const address = parseAddress(addressText);
  if (address === undefined || addressText.includes('%')) return undefined;
  const maxBits = address.length * 8;
  if (prefixText === undefined) return { bytes: address, prefixBits: maxBits };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefixBits = Number(prefixText);
  return prefixBits <= maxBits ? { bytes: address, prefixBits } : undefined;
}

/** The 4 or 16 bytes of an IP literal (an IPv6 zone such as `%eth0` is dropped). */
function parseAddress(text: string): Uint8Array | undefined {
  const bare = text.replace(/%.*$/, '');
  switch (isIP(bare)) {
    case 4:
      return Uint8Array.from(bare.split('.').map(Number));
    case 6:
      return parseIpv6(bare);
    default:
      return undefined;
  }
}

/** Bytes of an address `isIP` accepted as IPv6: at most one `::`, maybe a dotted IPv4 tail. */
function parseIpv6(text: string): Uint8Array {
  const groupsOf = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head = '', tail] = text.split('::');
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const zeroGroups = new Array<number>(8 - headGroups.length - tailGroups.length).fill(0);
  const bytes = new Uint8Array(16);
  [...headGroups, ...zeroGroups, ...tailGroups].forEach((group, index) => {
    bytes[2 * index] = group >> 8;
    bytes[2 * index + 1] = group & 0xff;
  });
  return bytes;
}

function embeddedIpv4Of(address: Uint8Array): Uint8Array | undefined {
  const form = embeddingNetworks.find(({ network }) => contains(network, address));
  return form === undefined ? undefined : address.slice(form.offset, form.offset + 4);
}

function contains(network: Network, address: Uint8Array): boolean {
  if (network.bytes.length !== address.length) return false;
  const fullBytes = Math.floor(network.prefixBits / 8);
  for (let index = 0; index < fullBytes; index += 1) {
    if (network.bytes[index] !== address[index]) return false;
  }
  const restBits = network.prefixBits % 8;
  if (restBits === 0) return true;
  const mask = (0xff << (8 - restBits)) & 0xff;
  return ((network.bytes[fullBytes]! ^ address[fullBytes]!) & mask) === 0;
}
