import { EventManager, ServerConnection } from '@jupyterlab/services';

/** Told when the event socket opens and when it closes. */
export interface IStreamWatcher {
  opened(): void;
  closed(): void;
}

/**
 * An event manager of its own for the sidebar, whose socket reports opening and closing.
 * It cannot share JupyterLab's (`serviceManager.events`): that one's socket is private, its
 * `stream` carries messages only, and it reconnects by itself telling no one it was away,
 * so the sidebar could neither say its jobs may be stale nor know when to replay what it
 * missed. Its socket is built from the settings' `WebSocket` when the manager is made, so
 * watching it means a manager of our own: one more socket a page, for that.
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
