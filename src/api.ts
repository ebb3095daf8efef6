import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IJob, ILogs, IState } from './types';

/** Error from the diamond REST API; `status` is 0 for network failures. */
export class DiamondApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }

  /** True when the server extension is not installed or not enabled. */
  get notInstalled(): boolean {
    return this.status === 404;
  }
}

/**
 * Call `/diamond/api/<path>` with the server's auth (token, XSRF).
 */
export async function requestAPI<T>(
  path: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'diamond/api', path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (err) {
    throw new DiamondApiError(`Network error: ${String(err)}`, 0);
  }
  const text = await response.text();
  let body: any = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!response.ok) {
    const reason =
      (body && typeof body === 'object' && (body.message || body.reason)) ||
      response.statusText ||
      `HTTP ${response.status}`;
    throw new DiamondApiError(String(reason), response.status);
  }
  return body as T;
}

export function fetchState(
  settings?: ServerConnection.ISettings
): Promise<IState> {
  return requestAPI<IState>('state', {}, settings);
}

function jobPath(id: string, action: string): string {
  return `jobs/${encodeURIComponent(id)}/${action}`;
}

/** POST /diamond/api/jobs/{id}/cancel; the body may be the updated Job. */
export function cancelJob(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<IJob | null> {
  return requestAPI<IJob | null>(
    jobPath(id, 'cancel'),
    { method: 'POST', body: '{}' },
    settings
  );
}

/** GET /diamond/api/jobs/{id}/logs -> {stdout, stderr}. */
export function fetchLogs(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<ILogs> {
  return requestAPI<ILogs>(jobPath(id, 'logs'), {}, settings);
}
