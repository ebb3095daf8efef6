import { EventManager, ServerConnection } from '@jupyterlab/services';

/** Told when the event socket opens and when it closes. */
export interface IStreamWatcher {
  opened(): void;
  closed(): void;
}

/**
 * An event manager of its own for the sidebar, whose socket reports opening and closing:
 * JupyterLab's shared one reconnects by itself but tells no one it was away, so a page
 * would show stale jobs as live.
 */
export function watchedEventManager(
  settings: ServerConnection.ISettings,
  watcher: IStreamWatcher
): EventManager {
  const Base = settings.WebSocket;
  class WatchedSocket extends Base {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('open', () => watcher.opened());
      this.addEventListener('close', () => watcher.closed());
    }
  }
  return new EventManager({
    serverSettings: ServerConnection.makeSettings({ ...settings, WebSocket: WatchedSocket })
  });
}
