/** Worker: the process that polls Temporal and runs workflows and activities (configuration, connection, health, metrics). */
export {};
