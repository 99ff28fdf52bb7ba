import pino from 'pino';
import type { Setting } from './settings';

/** How every Steward process logs: pino, at a level from its settings. */

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

export const logLevelSetting = {
  env: 'STEWARD_LOG_LEVEL',
  arg: 'level',
  default: 'info',
  description: 'trace, debug, info, warn or error',
} satisfies Setting;

// The SDK puts errors under `error`; without a serializer an Error logs as {}.
export const createLogger = (level: LogLevel) => pino({ level, serializers: { error: pino.stdSerializers.err } });
