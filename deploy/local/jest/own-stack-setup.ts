import { stderrReporter } from '../progress';
import { ensureStackTools } from './tools';

/** The own-stack files start their stacks themselves: only the tools are made ready first. */
export default async function ownStackSetup(): Promise<void> {
  await ensureStackTools(stderrReporter);
}
