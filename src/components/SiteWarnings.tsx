import * as React from 'react';

/**
 * The scheduler records a site's view left out (its snapshot's `warnings`), as a small
 * marker `[data-diamond-site-warnings=SITE]` whose tooltip lists them. Their text is the
 * scheduler's: it goes into attributes as text (React escapes it), never as markup.
 */
export function SiteWarnings(props: {
  site: string;
  warnings?: string[] | null;
  total?: number | null;
}): JSX.Element | null {
  const shown = props.warnings ?? [];
  const total = Math.max(props.total ?? 0, shown.length);
  if (total === 0) {
    return null;
  }
  const label = `${total} scheduler record${total === 1 ? '' : 's'} unreadable, left out of this view`;
  const more = total - shown.length;
  const lines = [`${label}:`, ...shown];
  if (more > 0) {
    lines.push(`… and ${more} more (\`diamond queue ${props.site}\` lists them all)`);
  }
  return (
    <span
      className="jp-diamond-site-warning"
      role="img"
      aria-label={label}
      title={lines.join('\n')}
      data-diamond-site-warnings={props.site}
      data-diamond-warnings-total={total}
    >
      ⚠ {total}
    </span>
  );
}
