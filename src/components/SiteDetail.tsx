import * as React from 'react';

import { fetchSiteDescription } from '../api';
import { ISiteDescription } from '../types';

function Line(props: { name: string; label: string; values?: string[] | null }): JSX.Element {
  const v = props.values;
  return (
    <div className="jp-diamond-detail-line" data-diamond-detail={props.name}>
      <dt>{props.label}</dt>
      <dd>{v === null || v === undefined ? 'unknown' : v.length ? v.join(', ') : 'none'}</dd>
    </div>
  );
}

/** What discovery found on a site (fetched when the site row is opened). */
export function SiteDetail({ name }: { name: string }): JSX.Element {
  const [desc, setDesc] = React.useState<ISiteDescription | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    let live = true;
    fetchSiteDescription(name)
      .then(d => live && setDesc(d))
      .catch(e => live && setError(String(e.message ?? e)));
    return () => {
      live = false;
    };
  }, [name]);
  if (error) {
    return (
      <div className="jp-diamond-error-text" data-diamond-site-detail={name}>
        Discovery failed: {error}
      </div>
    );
  }
  if (!desc) {
    return (
      <div className="jp-diamond-muted" data-diamond-site-detail={name} aria-busy="true">
        Discovering…
      </div>
    );
  }
  const c = desc.capabilities;
  const modules = c.software
    ? c.software.map(m => (m.version ? `${m.name}/${m.version}` : m.name))
    : null;
  const system = c.module_system
    ? `${c.module_system} ${desc.module_system_version ?? ''}`.trim()
    : 'none found';
  return (
    <details className="jp-diamond-site-detail" data-diamond-site-detail={name} open>
      <summary>What {name} has</summary>
      <dl>
        <Line name="architectures" label="Architectures" values={c.architectures} />
        <Line name="features" label="Features" values={c.features} />
        <Line name="gpu_models" label="GPU models" values={c.gpu_models} />
        <Line name="module_system" label="Module system" values={[system]} />
        <Line name="software" label="Software" values={modules} />
        <Line name="container_runtimes" label="Containers" values={c.container_runtimes} />
        <Line name="mpi" label="MPI" values={c.mpi} />
      </dl>
      <ul className="jp-diamond-node-types">
        {c.node_types.map(t => (
          <li key={t.name} data-diamond-node-type={t.name}>
            {t.count} × {t.name}
            {t.partitions.length ? ` (${t.partitions.join(', ')})` : ''}
          </li>
        ))}
      </ul>
      {(c.errors ?? []).map(e => (
        <div key={e} className="jp-diamond-error-text">
          {e}
        </div>
      ))}
    </details>
  );
}
