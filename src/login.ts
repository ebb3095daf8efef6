import { Dialog, Notification } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { DiamondApiError, requestAPI } from './api';
import { Emission, EVENT_PREFIX } from './types';

export const LOGIN_PROMPT = `${EVENT_PREFIX}login-prompt`;

/** A site's one-time code prompt, as the server holds it (never an answer). */
export interface ILoginPrompt {
  id: string;
  site: string;
  title?: string;
  instructions?: string;
  prompts: { text: string; echo: boolean }[];
}

/** The dialog's body: one field per prompt line; secrets in password fields. */
class CodeFields extends Widget implements Dialog.IBodyWidget<string[]> {
  private _inputs: HTMLInputElement[] = [];

  constructor(prompt: ILoginPrompt) {
    super();
    this.addClass('jp-diamond-login-body');
    for (const text of [prompt.title, prompt.instructions]) {
      if (text && text.trim()) {
        const p = document.createElement('p');
        p.textContent = text.trim();
        this.node.appendChild(p);
      }
    }
    for (const line of prompt.prompts) {
      const label = document.createElement('label');
      label.textContent = line.text.trim();
      const input = document.createElement('input');
      input.type = line.echo ? 'text' : 'password';
      input.autocomplete = 'one-time-code';
      input.className = 'jp-mod-styled';
      input.dataset.diamondLoginInput = prompt.site;
      label.appendChild(input);
      this.node.appendChild(label);
      this._inputs.push(input);
    }
  }

  getValue(): string[] {
    return this._inputs.map(i => i.value);
  }
}

/**
 * Shows a dialog for each prompt the server holds (login-prompt events, and GET logins
 * for prompts asked before this page listened) and sends the answer, or the refusal,
 * once. A prompt answered elsewhere or expired closes its dialog.
 */
export class LoginPrompts {
  private _open = new Map<string, Dialog<string[]>>();

  constructor(private _settings: ServerConnection.ISettings) {}

  /** Handle a login-prompt emission; false for any other emission. */
  handle(emission: Emission): boolean {
    if (emission.schema_id !== LOGIN_PROMPT) {
      return false;
    }
    const prompt = emission as unknown as ILoginPrompt & { phase: string };
    if (prompt.phase === 'asked') {
      void this.ask(prompt);
      return true;
    }
    const open = this._open.get(prompt.id);
    if (open) {
      this._open.delete(prompt.id);
      open.reject();
    }
    return true;
  }

  /** Ask for every prompt still waiting on the server. */
  async check(): Promise<void> {
    try {
      const { prompts } = await requestAPI<{ prompts: ILoginPrompt[] }>(
        'logins',
        {},
        this._settings
      );
      prompts.forEach(p => void this.ask(p));
    } catch {
      // not configured, or offline: the events bring the next prompt
    }
  }

  async ask(prompt: ILoginPrompt): Promise<void> {
    if (this._open.has(prompt.id)) {
      return;
    }
    const dialog = new Dialog<string[]>({
      title: `One-time code for ${prompt.site}`,
      body: new CodeFields(prompt),
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Log in' })],
      focusNodeSelector: 'input'
    });
    dialog.node.dataset.diamondLogin = prompt.site;
    this._open.set(prompt.id, dialog);
    const result = await dialog.launch();
    if (!this._open.delete(prompt.id)) {
      return; // closed because the server no longer waits for it
    }
    const path = `logins/${encodeURIComponent(prompt.id)}`;
    try {
      if (result.button.accept) {
        await requestAPI(
          path,
          { method: 'POST', body: JSON.stringify({ answers: result.value ?? [] }) },
          this._settings
        );
      } else {
        await requestAPI(path, { method: 'DELETE' }, this._settings);
      }
    } catch (err) {
      if (!(err instanceof DiamondApiError && err.status === 404)) {
        Notification.error(`Could not answer ${prompt.site}: ${(err as Error).message}`, {
          autoClose: false
        });
      }
    }
  }
}

/** Does this site wait for the user to log in (its door asks for a one-time code)? */
export function needsLogin(error: string | null | undefined): boolean {
  return !!error && /one-time code/.test(error);
}

/** Log in to `site` (one attempt); the outcome is a notification. */
export async function loginToSite(
  site: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<void> {
  const id = Notification.emit(`Logging in to ${site}…`, 'in-progress', { autoClose: false });
  try {
    await requestAPI(`sites/${encodeURIComponent(site)}/login`, { method: 'POST' }, settings);
    Notification.update({ id, type: 'success', message: `Logged in to ${site}.`, autoClose: 5000 });
  } catch (err) {
    Notification.update({
      id,
      type: 'error',
      message: `Could not log in to ${site}: ${(err as Error).message}`,
      autoClose: false
    });
  }
}
