import { Event, EventManager, ServerConnection } from '@jupyterlab/services';

/** Told when the event socket opens and when it closes. */
export interface IStreamWatcher {
  opened(): void;
  closed(): void;
}

/** What a JupyterLab `EventManager` holds at run time beyond its typed surface: the socket
 * it reads and the settings it makes the next one from (at each reconnect). */
interface ISocketHolder {
  _socket: WebSocket | null;
  serverSettings: ServerConnection.ISettings;
}

function watchSocket(socket: WebSocket, watcher: IStreamWatcher): void {
  socket.addEventListener('open', () => watcher.opened());
  socket.addEventListener('close', () => watcher.closed());
}

/** `settings` whose `WebSocket` reports each socket's opening and closing to `watcher`. */
function watchedSettings(
  settings: ServerConnection.ISettings,
  watcher: IStreamWatcher
): ServerConnection.ISettings {
  const Base = settings.WebSocket;
  class WatchedSocket extends Base {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      watchSocket(this, watcher);
    }
  }
  return { ...settings, WebSocket: WatchedSocket };
}

/**
 * The page's one event stream, watched: JupyterLab's own event manager
 * (`serviceManager.events`), whose socket every part of this extension (sidebar,
 * dashboard, notebook job cards, login prompts) shares through the one model.
 *
 * That manager's socket is not public and it reconnects by itself telling no one it was
 * away, yet the sidebar must say while its jobs may be stale and replay what it missed
 * once back. So the current socket is watched where the manager keeps it, and the sockets
 * of its reconnects through the settings it makes them from. A manager not shaped so (a
 * replacement from another extension) gets a watched manager of our own beside it: one
 * more socket, as before, rather than no word of a reconnect.
 */
export function watchPageEvents(
  manager: Event.IManager,
  watcher: IStreamWatcher
): Event.IManager {
  const holder = manager as unknown as ISocketHolder;
  if (!(manager instanceof EventManager) || !('_socket' in holder)) {
    return new EventManager({
      serverSettings: watchedSettings(manager.serverSettings, watcher)
    });
  }
  holder.serverSettings = watchedSettings(holder.serverSettings, watcher);
  const current = holder._socket;
  if (current) {
    watchSocket(current, watcher);
    if (current.readyState === WebSocket.CLOSING || current.readyState === WebSocket.CLOSED) {
      watcher.closed();
    }
  }
  return manager;
}
