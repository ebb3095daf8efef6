import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from '../api';
import { IDashboard, IUsage } from './types';

/** GET /diamond/api/dashboard: every site's queue (all users) and occupancy. */
export function fetchDashboard(settings?: ServerConnection.ISettings): Promise<IDashboard> {
  return requestAPI<IDashboard>('dashboard', {}, settings);
}

/** GET /diamond/api/sites/{site}/usage?hours=H: the site's occupancy over time. */
export function fetchUsage(
  site: string,
  hours: number,
  settings?: ServerConnection.ISettings
): Promise<IUsage> {
  return requestAPI<IUsage>(
    `sites/${encodeURIComponent(site)}/usage?hours=${hours}`,
    {},
    settings
  );
}
