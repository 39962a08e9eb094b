// The wallet (decisions §4, §15): its balance and statement, and their operator commands.
import type { Feature } from '../feature.ts';
import { walletCommands } from './admin.ts';
import { walletRoutes } from './routes.ts';

export const walletFeature: Feature = {
  name: 'wallet',
  commands: walletCommands,
  api(app, { orm }) {
    walletRoutes(app, { orm });
  },
};
