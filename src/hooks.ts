import * as React from 'react';

/** The width in px of the element `ref` (charts use the room they are given):
 * `fallback` until it is first measured, never less than `minWidth`. */
export function useWidth(ref: React.RefObject<HTMLElement>, fallback: number, minWidth: number): number {
  const [width, setWidth] = React.useState(fallback);
  React.useEffect(() => {
    const node = ref.current;
    if (!node) {
      return;
    }
    const measure = () => setWidth(Math.max(minWidth, Math.floor(node.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(node);
    return () => observer.disconnect();
  }, [ref, minWidth]);
  return width;
}
