import { randomBytes } from 'node:crypto';
import { AbstractStartedContainer, GenericContainer, Wait } from 'testcontainers';
import type { StartedTestContainer } from 'testcontainers';

/** The port every role of the image listens on. */
const httpPort = 8080;
/** The image `docker build -f deploy/Dockerfile -t monitor:local .` builds. */
const defaultImage = 'monitor:local';

/**
 * The monitor's all-in-one image (role `all`, embedded mode: its own PostgreSQL inside the
 * container, the in-process bus) as a testcontainers container. `start()` resolves once
 * `/readyz` answers 200; the started container gives the base URL and the API key that the
 * container's bootstrap organization holds (every scope).
 *
 *   const monitor = await new MonitorContainer().start();
 *   await fetch(`${monitor.getBaseUrl()}/api/v1/services`, {
 *     headers: { 'x-api-key': monitor.getApiKey() },
 *   });
 */
export class MonitorContainer extends GenericContainer {
  private apiKey = `mon_test_${randomBytes(16).toString('hex')}`;

  /** `image`: the monitor image to run, `monitor:local` (or MONITOR_IMAGE) when omitted. */
  constructor(image: string = process.env['MONITOR_IMAGE'] ?? defaultImage) {
    super(image);
    this.withCommand(['all'])
      .withExposedPorts(httpPort)
      .withWaitStrategy(Wait.forHttp('/readyz', httpPort).forStatusCode(200))
      // The embedded PostgreSQL initialises its data dir on first start: seconds, more when busy.
      .withStartupTimeout(120_000);
  }

  /** The bootstrap API key instead of a random one (at least 16 characters). */
  withApiKey(apiKey: string): this {
    if (apiKey.length < 16) throw new Error('the API key must have at least 16 characters');
    this.apiKey = apiKey;
    return this;
  }

  override async start(): Promise<StartedMonitorContainer> {
    this.withEnvironment({ MONITOR_BOOTSTRAP_API_KEY: this.apiKey });
    return new StartedMonitorContainer(await super.start(), this.apiKey);
  }
}

export class StartedMonitorContainer extends AbstractStartedContainer {
  constructor(
    startedTestContainer: StartedTestContainer,
    private readonly apiKey: string,
  ) {
    super(startedTestContainer);
  }

  /** `http://<host>:<port>`, without a trailing slash: the API is under `/api/v1`. */
  getBaseUrl(): string {
    return `http://${this.getHost()}:${this.getMappedPort(httpPort)}`;
  }

  /** The key of the bootstrap organization, sent as the `x-api-key` header. */
  getApiKey(): string {
    return this.apiKey;
  }
}
