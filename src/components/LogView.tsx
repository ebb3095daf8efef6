import * as React from 'react';

import { fetchLogs } from '../api';
import { terminalText } from '../format';
import { ILogs } from '../types';

/** "(missing: …)" when the server says the file does not exist, else "(empty)". */
function missingOr(logs: ILogs, stream: 'stdout' | 'stderr'): string {
  const line = (logs.missing ?? '')
    .split('\n')
    .find(l => l.startsWith(`${stream} log `));
  return line ? `(missing: ${line})` : '(empty)';
}

/** stdout and stderr of one job, from GET /diamond/api/jobs/{id}/logs. */
export function LogView({ jobId }: { jobId: string }): JSX.Element {
  const [logs, setLogs] = React.useState<ILogs | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [loading, setLoading] = React.useState(false);

  const load = React.useCallback(() => {
    setLoading(true);
    setError(null);
    fetchLogs(jobId)
      .then(l => setLogs(l))
      .catch(e => setError(String(e.message ?? e)))
      .finally(() => setLoading(false));
  }, [jobId]);

  React.useEffect(load, [load]);

  return (
    <div className="jp-diamond-logs" data-diamond-logs={jobId}>
      <div className="jp-diamond-logs-bar">
        <span>Logs of {jobId}</span>
        {/* named for the job: with two jobs' logs open, two "Reload" read alike */}
        <button
          className="jp-mod-styled"
          aria-label={`Reload logs of ${jobId}`}
          onClick={load}
          disabled={loading}
        >
          {loading ? 'Loading…' : 'Reload'}
        </button>
      </div>
      {error && <p className="jp-diamond-error-text">{error}</p>}
      {logs && (
        <>
          <h3>stdout</h3>
          <pre aria-label="standard output">
            {terminalText(logs.stdout) || missingOr(logs, 'stdout')}
          </pre>
          <h3>stderr</h3>
          <pre aria-label="standard error">
            {terminalText(logs.stderr) || missingOr(logs, 'stderr')}
          </pre>
        </>
      )}
    </div>
  );
}
