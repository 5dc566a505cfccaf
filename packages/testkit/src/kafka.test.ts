import { describe, expect, it } from 'vitest';
import { kafkaServerProperties, kafkaVersionFromPom, randomClusterId } from './kafka.js';

function parseProperties(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1)] as const;
      }),
  );
}

describe('kafkaServerProperties', () => {
  const props = parseProperties(
    kafkaServerProperties({ port: 40001, controllerPort: 40002, logDir: '/tmp/k/data' }),
  );

  it('listens and advertises on 127.0.0.1 only, clients and controller apart', () => {
    expect(props.get('listeners')).toBe('PLAINTEXT://127.0.0.1:40001,CONTROLLER://127.0.0.1:40002');
    expect(props.get('advertised.listeners')).toBe(
      'PLAINTEXT://127.0.0.1:40001,CONTROLLER://127.0.0.1:40002',
    );
    expect(props.get('controller.quorum.bootstrap.servers')).toBe('127.0.0.1:40002');
    expect(props.has('controller.quorum.voters')).toBe(false);
  });

  it('runs broker and controller in one node with single-replica internal topics', () => {
    expect(props.get('process.roles')).toBe('broker,controller');
    expect(props.get('offsets.topic.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.min.isr')).toBe('1');
    expect(props.get('group.initial.rebalance.delay.ms')).toBe('0');
    expect(props.get('log.dirs')).toBe('/tmp/k/data');
  });
});

describe('randomClusterId', () => {
  it('is 16 random bytes in unpadded base64url that never starts with a dash', () => {
    const ids = Array.from({ length: 500 }, () => randomClusterId());
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('kafkaVersionFromPom', () => {
  it('reads the kafka.version property', () => {
    expect(
      kafkaVersionFromPom('<properties>\n  <kafka.version>4.1.1</kafka.version>\n</properties>'),
    ).toBe('4.1.1');
  });

  it('throws when the property is missing', () => {
    expect(() => kafkaVersionFromPom('<project/>')).toThrow(/kafka\.version/);
  });
});
