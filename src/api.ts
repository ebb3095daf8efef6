import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  IFetchResult,
  IJob,
  IJobsPage,
  ILogs,
  ISiteDescription,
  IState
} from './types';

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
  // a string body is labelled text/plain by fetch unless told: the API reads JSON only
  const headers = new Headers(init.headers);
  if (init.body !== undefined && init.body !== null && !headers.has('Content-Type')) {
    headers.set('Content-Type', 'application/json');
  }
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, { ...init, headers }, settings);
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

/** The latest `jobs` jobs; sites from snapshots up to `maxAge` s old (refreshed behind). */
export function fetchState(
  settings?: ServerConnection.ISettings,
  jobs = 500,
  maxAge = 300
): Promise<IState> {
  return requestAPI<IState>(`state?jobs=${jobs}&max_age=${maxAge}`, {}, settings);
}

function jobPath(id: string, action: string): string {
  return `jobs/${encodeURIComponent(id)}/${action}`;
}

/** GET /diamond/api/jobs/{id}: the job, with what it waits for (`depends_on`). */
export function fetchJob(id: string, settings?: ServerConnection.ISettings): Promise<IJob> {
  return requestAPI<IJob>(`jobs/${encodeURIComponent(id)}`, {}, settings);
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

/** POST /diamond/api/jobs/{id}/release: the job, with `release_waiting` saying what a
 * release kept during its stage-in waits for (null: sent to the scheduler). */
export function releaseJob(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<IJob & { release_waiting?: string | null }> {
  return requestAPI<IJob & { release_waiting?: string | null }>(
    jobPath(id, 'release'),
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

/** GET /diamond/api/jobs with filters, for paging past the latest jobs in /state. */
export function fetchJobs(
  query: { site?: string; state?: string; name?: string; limit: number; offset: number },
  settings?: ServerConnection.ISettings
): Promise<IJobsPage> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== '') {
      params.set(k, String(v));
    }
  }
  return requestAPI<IJobsPage>(`jobs?${params.toString()}`, {}, settings);
}

/** POST /diamond/api/jobs/{id}/fetch: copy results under the server's root. */
export function fetchResults(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<IFetchResult> {
  return requestAPI<IFetchResult>(
    jobPath(id, 'fetch'),
    { method: 'POST', body: '{}' },
    settings
  );
}

/**
 * POST /diamond/api/tasks/{id}/approve|reject. An approval names the plan shown
 * (`planSha256`): the server refuses it (400) when the task now awaits another plan.
 * The reject route reads no plan (rejecting runs nothing).
 */
export function decideTask(
  id: string,
  decision: 'approve' | 'reject',
  planSha256: string | null,
  settings?: ServerConnection.ISettings
): Promise<unknown> {
  const body = decision === 'approve' ? { plan_sha256: planSha256 } : {};
  return requestAPI<unknown>(
    `tasks/${encodeURIComponent(id)}/${decision}`,
    { method: 'POST', body: JSON.stringify(body) },
    settings
  );
}

/** GET /diamond/api/sites/{name}/describe: what discovery found on the site. */
export function fetchSiteDescription(
  name: string,
  settings?: ServerConnection.ISettings
): Promise<ISiteDescription> {
  return requestAPI<ISiteDescription>(
    `sites/${encodeURIComponent(name)}/describe`,
    {},
    settings
  );
}
