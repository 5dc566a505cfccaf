import { describe, expect, it } from 'vitest';
import { createTargetAddressPolicy, isNetwork } from './target-address-policy.js';

describe('createTargetAddressPolicy', () => {
  const strict = createTargetAddressPolicy([]);

  it('refuses internal IPv4 addresses, naming their kind', () => {
    expect(
      Object.fromEntries(
        [
          '127.0.0.1',
          '127.255.255.254',
          '10.1.2.3',
          '172.16.0.1',
          '172.31.255.255',
          '192.168.1.1',
          '169.254.169.254',
          '100.64.0.1',
          '100.127.255.255',
          '0.0.0.0',
          '224.0.0.251',
          '255.255.255.255',
        ].map((address) => [address, strict.refusalOf(address)]),
      ),
    ).toEqual({
      '127.0.0.1': 'a loopback address',
      '127.255.255.254': 'a loopback address',
      '10.1.2.3': 'a private address',
      '172.16.0.1': 'a private address',
      '172.31.255.255': 'a private address',
      '192.168.1.1': 'a private address',
      '169.254.169.254': 'a link-local address',
      '100.64.0.1': 'a shared (CGNAT) address',
      '100.127.255.255': 'a shared (CGNAT) address',
      '0.0.0.0': 'an unspecified address',
      '224.0.0.251': 'a multicast address',
      '255.255.255.255': 'a reserved address',
    });
  });

  it('allows public IPv4 addresses, also next to the blocked ranges', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '169.253.255.255',
      '11.0.0.0',
      '223.255.255.255',
    ]) {
      expect(strict.refusalOf(address), address).toBeUndefined();
    }
  });

  it('refuses internal IPv6 addresses and allows public ones', () => {
    expect(strict.refusalOf('::1')).toBe('a loopback address');
    expect(strict.refusalOf('::')).toBe('an unspecified address');
    expect(strict.refusalOf('fd12:3456::1')).toBe('a private address');
    expect(strict.refusalOf('fc00::1')).toBe('a private address');
    expect(strict.refusalOf('fe80::1')).toBe('a link-local address');
    expect(strict.refusalOf('fe80::1%eth0')).toBe('a link-local address');
    expect(strict.refusalOf('FEBF:ffff::1')).toBe('a link-local address');
    expect(strict.refusalOf('ff02::1')).toBe('a multicast address');
    expect(strict.refusalOf('2606:4700:4700::1111')).toBeUndefined();
    expect(strict.refusalOf('2001:db8:85a3::8a2e:370:7334')).toBeUndefined();
    expect(strict.refusalOf('fe00::1')).toBeUndefined();
  });

  it('judges IPv6 forms that embed an IPv4 address by that address', () => {
    expect(strict.refusalOf('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(strict.refusalOf('::ffff:7f00:1')).toBe('a loopback address');
    expect(strict.refusalOf('::FFFF:169.254.169.254')).toBe('a link-local address');
    expect(strict.refusalOf('::ffff:a9fe:a9fe')).toBe('a link-local address');
    expect(strict.refusalOf('::ffff:10.0.0.1')).toBe('a private address');
    expect(strict.refusalOf('::ffff:0:10.0.0.1')).toBe('a private address');
    expect(strict.refusalOf('64:ff9b::192.168.0.1')).toBe('a private address');
    expect(strict.refusalOf('2002:7f00:1::1')).toBe('a loopback address');
    expect(strict.refusalOf('::ffff:8.8.8.8')).toBeUndefined();
    expect(strict.refusalOf('64:ff9b::808:808')).toBeUndefined();
    // IPv4-compatible (deprecated) addresses lead nowhere public.
    expect(strict.refusalOf('::127.0.0.1')).toBe('a reserved address');
  });

  it('refuses what is not an IP address', () => {
    expect(strict.refusalOf('localhost')).toBe('not an IP address');
    expect(strict.refusalOf('127.1')).toBe('not an IP address');
    expect(strict.refusalOf('')).toBe('not an IP address');
  });

  it('allows blocked addresses inside the allowed networks only', () => {
    const policy = createTargetAddressPolicy(['127.0.0.1/32', ' 10.20.0.0/16', 'fd00::/8', '::1']);
    expect(policy.refusalOf('127.0.0.1')).toBeUndefined();
    expect(policy.refusalOf('::ffff:127.0.0.1')).toBeUndefined();
    expect(policy.refusalOf('127.0.0.2')).toBe('a loopback address');
    expect(policy.refusalOf('10.20.255.1')).toBeUndefined();
    expect(policy.refusalOf('10.21.0.1')).toBe('a private address');
    expect(policy.refusalOf('fdab::1')).toBeUndefined();
    expect(policy.refusalOf('fcab::1')).toBe('a private address');
    expect(policy.refusalOf('::1')).toBeUndefined();
    expect(policy.refusalOf('169.254.169.254')).toBe('a link-local address');
  });

  it('matches prefixes that end inside a byte, ignoring host bits of the network', () => {
    const policy = createTargetAddressPolicy(['169.254.169.254/31', '172.20.9.9/14']);
    expect(policy.refusalOf('169.254.169.255')).toBeUndefined();
    expect(policy.refusalOf('169.254.169.253')).toBe('a link-local address');
    expect(policy.refusalOf('172.23.255.255')).toBeUndefined();
    expect(policy.refusalOf('172.24.0.0')).toBe('a private address');
  });

  it('throws on an allowed network that does not parse', () => {
    expect(() => createTargetAddressPolicy(['10.0.0.0/33'])).toThrow('not a CIDR network');
  });
});

describe('isNetwork', () => {
  it('accepts IPv4 and IPv6 CIDRs and single addresses', () => {
    for (const text of [
      '10.0.0.0/8',
      '127.0.0.1/32',
      '127.0.0.1',
      '0.0.0.0/0',
      'fd00::/8',
      '::1',
    ]) {
      expect(isNetwork(text), text).toBe(true);
    }
  });

  it('rejects prefixes out of range, host names, zones and extra parts', () => {
    for (const text of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/',
      '10.0.0.0/-1',
      '10.0.0.0/8/8',
      '10.0.0/8',
      'localhost',
      'fe80::1%eth0/64',
      '',
    ]) {
      expect(isNetwork(text), text).toBe(false);
    }
  });
});
