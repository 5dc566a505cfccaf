export { MonitorContainer, StartedMonitorContainer } from './monitor-container.js';
