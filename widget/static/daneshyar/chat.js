// @ts-check
/**
 * <daneshyar-chat>: Daneshyar's embeddable chat, a custom element with its own
 * shadow DOM and no dependencies. Served by the service itself as a static
 * file (/static/daneshyar/chat.js); docs/embedding.md, "The widget".
 *
 *   <script src="https://daneshyar.example/static/daneshyar/chat.js" defer></script>
 *   <daneshyar-chat workspace="WORKSPACE_ID" token-provider="/daneshyar-token"></daneshyar-chat>
 *
 * The page never holds an API key: `token-provider` is a URL on the
 * integrator's server answering {"token", "expires_at"} for the signed-in
 * user (or set `element.tokenProvider = async () => ({token, expires_at})`).
 * Plain JavaScript checked with JSDoc types (TypeScript's tsc --checkJs in
 * tests/widget/test_types.py): the file is its own source, so a fresh clone,
 * `make run` and the Docker image need no build step and no node.
 */
(() => {
  "use strict";

  /** The origin this file was loaded from: the default `base-url`. */
  const SCRIPT_ORIGIN = (() => {
    const script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
    try {
      return script && script.src ? new URL(script.src).origin : location.origin;
    } catch {
      return location.origin;
    }
  })();

  // Renew a token this long before it expires (or at half its life if shorter).
  const REFRESH_MARGIN_MS = 60_000;
  // setTimeout fires at once past this (about 24.8 days).
  const MAX_TIMER_MS = 2 ** 31 - 1;

  /** @type {Record<string, Record<string, string>>} */
  const TEXTS = {
    en: {
      title: "Ask our documents",
      placeholder: "Type your question…",
      send: "Send",
      question: "Your question",
      sessions: "Conversations",
      newChat: "New conversation",
      noSessions: "No earlier conversations.",
      you: "You",
      assistant: "Assistant",
      thinking: "Thinking…",
      source: "Source",
      page: "page",
      close: "Close",
      missing: "This passage is no longer available.",
      submit: "Send answers",
      yes: "yes",
      no: "no",
      choose: "Choose…",
      unreachable: "The assistant cannot be reached from this page.",
      failed: "Something went wrong. Please try again.",
      required: "Please answer this.",
      retry: "Try again",
    },
    fa: {
      title: "از اسناد ما بپرسید",
      placeholder: "پرسش خود را بنویسید…",
      send: "ارسال",
      question: "پرسش شما",
      sessions: "گفتگوها",
      newChat: "گفتگوی تازه",
      noSessions: "گفتگوی پیشینی نیست.",
      you: "شما",
      assistant: "دستیار",
      thinking: "در حال پاسخ…",
      source: "منبع",
      page: "صفحه",
      close: "بستن",
      missing: "این بخش دیگر در دسترس نیست.",
      submit: "ارسال پاسخ‌ها",
      yes: "بله",
      no: "خیر",
      choose: "انتخاب کنید…",
      unreachable: "دستیار از این صفحه در دسترس نیست.",
      failed: "خطایی رخ داد. دوباره تلاش کنید.",
      required: "لطفاً پاسخ دهید.",
      retry: "تلاش دوباره",
    },
  };

  const STYLE = `
:host{--daneshyar-accent:#2f5bd3;--daneshyar-accent-text:#fff;--daneshyar-bg:#fff;--daneshyar-fg:#1d2330;
--daneshyar-muted:#5f6776;--daneshyar-border:#d6dae2;--daneshyar-user-bg:#eef2fc;--daneshyar-radius:10px;
--daneshyar-font:system-ui,-apple-system,"Segoe UI",Roboto,"Vazirmatn",sans-serif;--daneshyar-font-size:15px;
--daneshyar-height:560px;display:block;font-family:var(--daneshyar-font);font-size:var(--daneshyar-font-size);
color:var(--daneshyar-fg)}
*{box-sizing:border-box}
.frame{display:flex;flex-direction:column;block-size:var(--daneshyar-height);background:var(--daneshyar-bg);
border:1px solid var(--daneshyar-border);border-radius:var(--daneshyar-radius);overflow:hidden;position:relative}
header{display:flex;align-items:center;gap:.5em;padding-block:.6em;padding-inline:.9em;
border-block-end:1px solid var(--daneshyar-border)}
h2{font-size:1.05em;margin:0;flex:1}
button{font:inherit;cursor:pointer;border-radius:calc(var(--daneshyar-radius) * .6);
border:1px solid var(--daneshyar-border);background:var(--daneshyar-bg);color:inherit;padding-block:.35em;padding-inline:.7em}
button.primary{background:var(--daneshyar-accent);border-color:var(--daneshyar-accent);color:var(--daneshyar-accent-text)}
button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{
outline:2px solid var(--daneshyar-accent);outline-offset:2px}
button:disabled{opacity:.55;cursor:default}
.sessions{border-block-end:1px solid var(--daneshyar-border);padding-block:.5em;padding-inline:.9em;max-block-size:40%;overflow:auto}
.sessions ul{list-style:none;margin:0;padding:0}
.sessions li button{inline-size:100%;text-align:start;border:0;padding-block:.35em;padding-inline:.4em}
.sessions li button[aria-current=true]{font-weight:600;background:var(--daneshyar-user-bg)}
.log{flex:1;overflow-y:auto;padding:.9em;display:flex;flex-direction:column;gap:.75em}
.msg{max-inline-size:88%;padding-block:.55em;padding-inline:.8em;border-radius:var(--daneshyar-radius);
line-height:1.5;white-space:pre-wrap;overflow-wrap:anywhere}
.msg.user{align-self:flex-end;background:var(--daneshyar-user-bg)}
.msg.assistant{align-self:flex-start;border:1px solid var(--daneshyar-border)}
.msg[aria-busy=true]::after{content:"▍";color:var(--daneshyar-muted)}
.who{position:absolute;inline-size:1px;block-size:1px;overflow:hidden;clip-path:inset(50%)}
.cite{font-size:.8em;vertical-align:super;border:0;padding:0;margin-inline-start:.15em;background:none;
color:var(--daneshyar-accent);text-decoration:underline}
.error{margin:.6em .9em 0;padding:.5em .8em;border-radius:var(--daneshyar-radius);background:#fdecec;color:#8a1f1f}
form.answer{display:flex;flex-direction:column;gap:.6em;margin-block-start:.6em;white-space:normal}
form.answer fieldset{border:0;margin:0;padding:0;display:flex;flex-direction:column;gap:.25em}
form.answer legend,form.answer label.field{font-weight:600;padding:0}
form.answer input:not([type=checkbox]):not([type=radio]),form.answer select,form.answer textarea{
font:inherit;padding:.35em .5em;border:1px solid var(--daneshyar-border);border-radius:calc(var(--daneshyar-radius) * .5);
inline-size:100%;background:var(--daneshyar-bg);color:inherit}
form.answer .choice{display:flex;align-items:center;gap:.4em;font-weight:400}
.req{color:#b42318;margin-inline-start:.2em}
.compose{display:flex;gap:.5em;padding:.7em .9em;border-block-start:1px solid var(--daneshyar-border)}
.compose textarea{flex:1;font:inherit;resize:none;padding:.45em .6em;border:1px solid var(--daneshyar-border);
border-radius:calc(var(--daneshyar-radius) * .6);background:var(--daneshyar-bg);color:inherit}
dialog{border:1px solid var(--daneshyar-border);border-radius:var(--daneshyar-radius);max-inline-size:min(34em,90vw);
padding:1em 1.2em;color:var(--daneshyar-fg);background:var(--daneshyar-bg);font-family:var(--daneshyar-font)}
dialog h3{margin-block:0 .2em;font-size:1em}
dialog .meta{color:var(--daneshyar-muted);font-size:.85em;margin-block-end:.6em}
dialog blockquote{margin:0;padding-inline-start:.8em;border-inline-start:3px solid var(--daneshyar-accent);white-space:pre-wrap;
max-block-size:50vh;overflow:auto}
dialog .actions{display:flex;justify-content:flex-end;margin-block-start:.8em}
`;

  /**
   * @typedef {{token: string, expires_at?: string}} TokenAnswer
   * @typedef {{resource_id: string, resource_title: string, passage_id: string}} Source
   * @typedef {{text: string, source: Source | null, language?: string}} Part
   * @typedef {{value: string, label: string}} Choice
   * @typedef {{name: string, label: string, type: string, required: boolean, placeholder?: string,
   *   options?: string[], choices?: Choice[], min?: number, max?: number}} Field
   * @typedef {{type: string, parts: Part[], form: {title: string, fields: Field[]} | null}} Reply
   * @typedef {{id: string, role: string, content: string, response?: Reply | null}} ChatMessage
   */

  /** An error the API answered in its envelope. */
  class ApiError extends Error {
    /** @param {number} status @param {string} code @param {string} message */
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** @param {string} tag @param {Record<string, string>} [attrs] @param {(Node | string)[]} [children] */
  function h(tag, attrs = {}, children = []) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    for (const child of children) node.append(child);
    return node;
  }

  /** The `sub` claim of a JWT, or null (the token stays opaque otherwise). */
  function subjectOf(/** @type {string} */ token) {
    try {
      const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
      const sub = JSON.parse(new TextDecoder().decode(bytes)).sub;
      return typeof sub === "string" ? sub : null;
    } catch {
      return null;
    }
  }

  /**
   * Server-sent events from a fetch response body: yields {event, data}
   * (comment lines such as the heartbeat are skipped).
   * @param {ReadableStream<Uint8Array>} body
   */
  async function* readEvents(body) {
    // TypeScript's DOM typings have the decoder take BufferSource, which a
    // Uint8Array that might view a SharedArrayBuffer is not; a response's is not.
    const decoder = /** @type {TransformStream<Uint8Array, string>} */ (
      /** @type {unknown} */ (new TextDecoderStream())
    );
    const reader = body.pipeThrough(decoder).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
      }
    }
  }

  /**
   * A field's options, each with the value sent back and the label shown: its
   * `choices` where it has them (the "which one do you mean?" form's carry the
   * documents' ids), else its `options`, each its own value.
   * @param {Field} field @returns {Choice[]}
   */
  function choicesOf(field) {
    if (field.choices && field.choices.length) return field.choices;
    return (field.options || []).map((option) => ({ value: option, label: option }));
  }

  /**
   * A form's answers as the follow-up message, one `name: value` line per
   * answered field (`message`: an option's value, as the server resolves
   * it), and the same lines as the user reads them (`shown`: its label).
   * @param {HTMLFormElement} form @param {Field[]} fields
   */
  function formAnswer(form, fields) {
    const data = new FormData(form);
    const lines = [];
    for (const field of fields) {
      let value;
      if (field.type === "checkbox" && !(field.options && field.options.length)) {
        value = data.get(field.name) ? "yes" : "no";
      } else {
        value = data
          .getAll(field.name)
          .map((v) => String(v).trim())
          .filter(Boolean)
          .join(", ");
      }
      if (value) lines.push(`${field.name}: ${value}`);
    }
    const message = lines.join("\n");
    return { message, shown: shownAnswer(message, fields) };
  }

  /**
   * A form answer as the user reads it: each `name: value` line of a field
   * with choices shows the chosen options' labels instead of their values
   * (a restored conversation shows what the user picked, not an id).
   * @param {string} message @param {Field[]} fields
   */
  function shownAnswer(message, fields) {
    return message
      .split("\n")
      .map((line) => {
        const colon = line.indexOf(":");
        const field = colon < 0 ? undefined : fields.find((f) => f.name === line.slice(0, colon).trim());
        if (!field || !field.choices || !field.choices.length) return line;
        const labels = line
          .slice(colon + 1)
          .split(", ")
          .map((value) => {
            const choice = choicesOf(field).find((c) => c.value === value.trim());
            return choice ? choice.label : value.trim();
          });
        return `${field.name}: ${labels.join(", ")}`;
      })
      .join("\n");
  }

  class DaneshyarChat extends HTMLElement {
    static get observedAttributes() {
      return ["workspace", "lang", "dir", "placeholder", "chat-title"];
    }

    constructor() {
      super();
      // A provider set on the element before this script upgraded it is an
      // own property that would hide the accessor: take it over.
      const preset = Object.prototype.hasOwnProperty.call(this, "tokenProvider")
        ? /** @type {any} */ (this).tokenProvider
        : null;
      delete (/** @type {any} */ (this).tokenProvider);
      /** @type {(() => Promise<TokenAnswer | string>) | null} */
      this._provider = typeof preset === "function" ? preset : null;
      /** @type {{token: string, expiresAt: number} | null} */
      this._token = null;
      /** @type {Promise<string> | null} */
      this._pending = null;
      /** @type {string | null} */
      this.sessionId = null;
      this._busy = false;
      /** @type {Map<string, Promise<any[]>>} */
      this._sources = new Map();
      this._ids = 0;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<style>${STYLE}</style>`;
      this._build(root);
    }

    connectedCallback() {
      this._applyTexts();
      queueMicrotask(() => this._start());
    }

    /** A function returning a token (or {token, expires_at}), instead of the `token-provider` URL. */
    get tokenProvider() {
      return this._provider;
    }

    set tokenProvider(provider) {
      this._provider = typeof provider === "function" ? provider : null;
      if (this.isConnected) this._start();
    }

    /** Once connected and given a way to get tokens: restore the user's session. */
    _start() {
      if (this._started || (!this._provider && !this.getAttribute("token-provider"))) return;
      this._started = true;
      this._restore();
    }

    disconnectedCallback() {
      if (this._timer) clearTimeout(this._timer);
    }

    attributeChangedCallback() {
      this._applyTexts();
    }

    get baseUrl() {
      return (this.getAttribute("base-url") || SCRIPT_ORIGIN).replace(/\/+$/, "");
    }

    get workspace() {
      return this.getAttribute("workspace") || "";
    }

    /** @param {string} key */
    t(key) {
      const lang = (this.getAttribute("lang") || document.documentElement.lang || "en").slice(0, 2);
      return (TEXTS[lang] || TEXTS.en)[key] || TEXTS.en[key];
    }

    /** @param {ShadowRoot} root */
    _build(root) {
      const id = (/** @type {string} */ name) => `${name}-${++this._ids}`;
      this._titleId = id("title");
      this._heading = h("h2", { id: this._titleId, part: "title" });
      this._sessionsButton = h("button", { type: "button", "aria-expanded": "false", part: "sessions-button" });
      this._newButton = h("button", { type: "button", part: "new-button" });
      const panelId = id("sessions");
      this._sessionsButton.setAttribute("aria-controls", panelId);
      this._sessionsPanel = h("nav", { class: "sessions", id: panelId, hidden: "" });
      this._error = h("div", { class: "error", role: "alert", hidden: "", part: "error" });
      this._log = h("div", { class: "log", role: "log", "aria-live": "polite", "aria-relevant": "additions text" });
      this._inputId = id("input");
      this._label = h("label", { for: this._inputId, class: "who" });
      this._input = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: this._inputId, rows: "2", part: "input" }));
      this._send = h("button", { type: "submit", class: "primary", part: "send" });
      const compose = h("form", { class: "compose" }, [this._label, this._input, this._send]);
      this._dialog = /** @type {HTMLDialogElement} */ (h("dialog", { "aria-modal": "true" }));
      const frame = h("section", { class: "frame", "aria-labelledby": this._titleId, part: "frame" }, [
        h("header", {}, [this._heading, this._sessionsButton, this._newButton]),
        this._sessionsPanel,
        this._error,
        this._log,
        compose,
      ]);
      root.append(frame, this._dialog);
      compose.addEventListener("submit", (event) => {
        event.preventDefault();
        this.ask(this._input.value);
      });
      this._input.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.ask(this._input.value);
        }
      });
      this._sessionsButton.addEventListener("click", () => this._toggleSessions());
      this._sessionsPanel.addEventListener("keydown", (event) => {
        if (event.key !== "Escape") return;
        this._sessionsPanel.hidden = true;
        this._sessionsButton.setAttribute("aria-expanded", "false");
        this._sessionsButton.focus();
      });
      this._newButton.addEventListener("click", () => this.newConversation());
      this._dialog.addEventListener("close", () => {
        if (this._opener) this._opener.focus();
      });
    }

    _applyTexts() {
      if (!this._heading) return;
      this._heading.textContent = this.getAttribute("chat-title") || this.t("title");
      this._input.placeholder = this.getAttribute("placeholder") || this.t("placeholder");
      this._label.textContent = this.t("question");
      this._send.textContent = this.t("send");
      this._sessionsButton.textContent = this.t("sessions");
      this._newButton.textContent = this.t("newChat");
      const frame = /** @type {HTMLElement} */ (this.shadowRoot?.querySelector(".frame"));
      const dir = this.getAttribute("dir");
      if (dir) frame.setAttribute("dir", dir);
      else frame.removeAttribute("dir");
      if (this.getAttribute("lang")) frame.setAttribute("lang", /** @type {string} */ (this.getAttribute("lang")));
    }

    // --- tokens -------------------------------------------------------------

    /** A valid token, renewed ahead of its expiry; `force` after a 401 token_expired. */
    async token(force = false) {
      const now = Date.now();
      const current = this._token;
      if (!force && current && now < current.expiresAt) return current.token;
      if (!this._pending) {
        this._pending = this._fetchToken().finally(() => {
          this._pending = null;
        });
      }
      return this._pending;
    }

    async _fetchToken() {
      /** @type {TokenAnswer | string} */
      let answer;
      const provider = this.getAttribute("token-provider");
      if (this._provider) {
        answer = await this._provider();
      } else if (provider) {
        const response = await fetch(provider, {
          method: (this.getAttribute("token-method") || "POST").toUpperCase(),
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        });
        if (!response.ok) throw new ApiError(response.status, "token_provider", `token provider: ${response.status}`);
        answer = await response.json();
      } else {
        throw new ApiError(0, "token_provider", "no token-provider attribute or tokenProvider property");
      }
      const token = typeof answer === "string" ? answer : answer.token;
      const expires = typeof answer === "string" ? NaN : Date.parse(answer.expires_at || "");
      const life = Number.isNaN(expires) ? 5 * 60_000 : expires - Date.now();
      this._token = { token, expiresAt: Date.now() + Math.max(0, life - Math.min(REFRESH_MARGIN_MS, life / 2)) };
      if (this._timer) clearTimeout(this._timer);
      // Renewed in the background too, so a long idle page has a token ready.
      const delay = Math.min(MAX_TIMER_MS, Math.max(1_000, this._token.expiresAt - Date.now()));
      this._timer = setTimeout(() => this.token(true).catch(() => {}), delay);
      const sub = subjectOf(token);
      if (sub !== this._user) {
        this._user = sub;
        this.sessionId = this._stored();
      }
      return token;
    }

    /** The end user's key in localStorage: one session per workspace and user. */
    get _storageKey() {
      return `daneshyar-chat:${this.workspace}:${this._user || "anonymous"}`;
    }

    _stored() {
      try {
        return localStorage.getItem(this._storageKey);
      } catch {
        return null;
      }
    }

    /** @param {string | null} id */
    _store(id) {
      this.sessionId = id;
      try {
        if (id) localStorage.setItem(this._storageKey, id);
        else localStorage.removeItem(this._storageKey);
      } catch {
        /* storage may be off (private mode); the session lasts for the page */
      }
    }

    // --- the API ------------------------------------------------------------

    /**
     * A request to the API with the token; a 401 token_expired is retried once
     * with a fresh token. Network failures (CORS refusals included) surface as
     * TypeError.
     * @param {string} path @param {RequestInit} [init] @returns {Promise<Response>}
     */
    async api(path, init = {}) {
      for (let attempt = 0; ; attempt++) {
        const token = await this.token(attempt > 0);
        const headers = { ...(init.headers || {}), Authorization: `Bearer ${token}` };
        const response = await fetch(`${this.baseUrl}/api/v1/workspaces/${encodeURIComponent(this.workspace)}/${path}`, {
          ...init,
          headers,
          credentials: "omit",
        });
        if (response.ok) return response;
        let code = "http_error";
        let message = `HTTP ${response.status}`;
        try {
          const body = await response.json();
          code = body.error.code;
          message = body.error.message;
        } catch {
          /* not an envelope */
        }
        if (response.status === 401 && code === "token_expired" && attempt === 0) continue;
        throw new ApiError(response.status, code, message);
      }
    }

    /** @param {string} path */
    async getData(path) {
      return (await (await this.api(path)).json()).data;
    }

    _userQuery() {
      return this._user ? `external_user_id=${encodeURIComponent(this._user)}` : "";
    }

    // --- conversation ---------------------------------------------------------

    async _restore() {
      try {
        await this.token();
        if (this.sessionId) await this.openSession(this.sessionId);
        this._ready();
      } catch (error) {
        this._fail(error);
      }
    }

    _ready() {
      this.setAttribute("state", "ready");
      this._error.hidden = true;
    }

    /** Show a session's messages (the restored one, or one picked from the list). */
    async openSession(/** @type {string} */ id) {
      try {
        const data = await this.getData(`sessions/${id}/messages/?limit=100&${this._userQuery()}`);
        this._log.replaceChildren();
        this._store(id);
        /** @type {Field[]} */
        let asked = [];
        data.items.forEach((/** @type {ChatMessage} */ message, /** @type {number} */ i) => {
          // A form's answer shows the labels of the options it chose.
          const shown =
            message.role === "user" ? { ...message, content: shownAnswer(message.content, asked) } : message;
          // A form is live only while it is the conversation's last word.
          this._render(shown, i === data.items.length - 1);
          asked = (message.response && message.response.form && message.response.form.fields) || [];
        });
        this._log.scrollTop = this._log.scrollHeight;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) this._store(null);
        else throw error;
      }
    }

    newConversation() {
      this._store(null);
      this._log.replaceChildren();
      this._input.focus();
    }

    /**
     * Ask a question (or send a form's answers) and stream the reply.
     * @param {string} text what is sent @param {string} [shown] what the
     * conversation shows for it (a form's answer: the options' labels)
     */
    async ask(text, shown) {
      const message = text.trim();
      if (!message || this._busy) return;
      this._busy = true;
      this._send.toggleAttribute("disabled", true);
      for (const control of this._log.querySelectorAll("form.answer :is(input,select,textarea,button)")) {
        control.setAttribute("disabled", "");
      }
      this._input.value = "";
      this._render({ id: "", role: "user", content: (shown || message).trim() }, true);
      const bubble = this._bubble("assistant");
      bubble.setAttribute("aria-busy", "true");
      const body = { message, ...(this.sessionId ? { session_id: this.sessionId } : {}) };
      if (this._user) Object.assign(body, { external_user_id: this._user });
      try {
        const response = await this.api("chat/stream/", {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify(body),
        });
        await this._consume(/** @type {ReadableStream<Uint8Array>} */ (response.body), bubble);
        this._ready();
      } catch (error) {
        bubble.remove();
        this._fail(error);
      } finally {
        this._busy = false;
        this._send.removeAttribute("disabled");
      }
    }

    /** @param {ReadableStream<Uint8Array>} stream @param {HTMLElement} bubble */
    async _consume(stream, bubble) {
      let text = "";
      for await (const { event, data } of readEvents(stream)) {
        if (event === "session") this._store(data.id);
        else if (event === "delta") {
          text += data.text;
          this._content(bubble).textContent = text;
          this._log.scrollTop = this._log.scrollHeight;
        } else if (event === "message") {
          bubble.remove();
          this._render(data, true);
          return;
        } else if (event === "error") {
          throw new ApiError(0, data.code, data.message);
        }
      }
      throw new ApiError(0, "stream_ended", "the stream ended before the answer");
    }

    /** @param {unknown} error */
    _fail(error) {
      const offline = error instanceof TypeError;
      this.setAttribute("state", "error");
      this._error.textContent = offline ? this.t("unreachable") : this.t("failed");
      if (error instanceof ApiError && error.status && error.status < 500 && error.message) {
        this._error.textContent += ` (${error.message})`;
      }
      this._error.hidden = false;
      this.dispatchEvent(new CustomEvent("daneshyar-error", { detail: error, bubbles: true, composed: true }));
    }

    // --- rendering ------------------------------------------------------------

    /**
     * A message's bubble. dir="auto": a Persian or Arabic message reads right to
     * left in an English widget, and an English one left to right in a Persian
     * one; the hidden "who" label has a dir of its own, so the direction is the
     * message's.
     * @param {string} role
     */
    _bubble(role) {
      const bubble = h("div", { class: `msg ${role}`, part: `message ${role}`, dir: "auto" }, [
        h("span", { class: "who", dir: "auto" }, [`${this.t(role === "user" ? "you" : "assistant")}: `]),
        h("span", { class: "content" }),
      ]);
      this._log.append(bubble);
      this._log.scrollTop = this._log.scrollHeight;
      return bubble;
    }

    /** @param {HTMLElement} bubble */
    _content(bubble) {
      return /** @type {HTMLElement} */ (bubble.querySelector(".content"));
    }

    /** @param {ChatMessage} message @param {boolean} live */
    _render(message, live) {
      const bubble = this._bubble(message.role === "user" ? "user" : "assistant");
      const content = this._content(bubble);
      const reply = message.response;
      if (message.role !== "assistant" || !reply || !Array.isArray(reply.parts)) {
        content.textContent = message.content;
        return bubble;
      }
      /** @type {Map<string, number>} */
      const numbers = new Map();
      for (const part of reply.parts) {
        // A part quoted in another language than the reply's reads in its own direction.
        content.append(part.language ? h("span", { lang: part.language, dir: "auto" }, [part.text]) : part.text);
        if (!part.source) continue;
        const source = part.source;
        if (!numbers.has(source.passage_id)) numbers.set(source.passage_id, numbers.size + 1);
        const n = numbers.get(source.passage_id);
        const marker = h("button", {
          type: "button",
          class: "cite",
          part: "citation",
          "aria-haspopup": "dialog",
          "aria-label": `${this.t("source")} ${n}: ${source.resource_title}`,
          "data-passage": source.passage_id,
        }, [`[${n}]`]);
        marker.addEventListener("click", () => this._openSource(message.id, source, /** @type {HTMLElement} */ (marker)));
        content.append(marker, " ");
      }
      if (reply.type === "form" && reply.form) {
        const asked = reply.parts.map((part) => part.text.trim()).join(" ");
        content.append(this._form(reply.form, live, reply.form.title.trim() !== asked));
      }
      return bubble;
    }

    /**
     * The cited passage in a modal dialog: title, page when known, text.
     * @param {string} messageId @param {Source} source @param {HTMLElement} opener
     */
    async _openSource(messageId, source, opener) {
      this._opener = opener;
      const titleId = `source-title-${++this._ids}`;
      const text = h("blockquote", {}, [this.t("thinking")]);
      const meta = h("p", { class: "meta" });
      const close = h("button", { type: "button", class: "primary", part: "close" }, [this.t("close")]);
      close.addEventListener("click", () => this._dialog.close());
      this._dialog.setAttribute("aria-labelledby", titleId);
      this._dialog.replaceChildren(
        h("h3", { id: titleId }, [source.resource_title]),
        meta,
        text,
        h("div", { class: "actions" }, [close]),
      );
      this._dialog.showModal();
      this._place(opener);
      close.focus();
      try {
        const passages = await this._passages(messageId);
        const passage = passages.find((p) => p.passage_id === source.passage_id);
        if (!passage) {
          text.textContent = this.t("missing");
          return;
        }
        text.textContent = passage.text;
        if (passage.page) meta.textContent = `${this.t("page")} ${passage.page}`;
      } catch (error) {
        text.textContent = this.t("failed");
      }
    }

    /** The dialog just below its marker (above it when there is no room), inside the viewport. */
    _place(/** @type {HTMLElement} */ opener) {
      const dialog = this._dialog;
      const at = opener.getBoundingClientRect();
      Object.assign(dialog.style, { margin: "0", inset: "auto", top: "0px", left: "0px" });
      const box = dialog.getBoundingClientRect();
      const below = at.bottom + 8;
      const top = below + box.height <= innerHeight - 8 ? below : Math.max(8, at.top - 8 - box.height);
      const left = Math.min(at.left + at.width / 2 - box.width / 2, innerWidth - box.width - 8);
      Object.assign(dialog.style, { top: `${top}px`, left: `${Math.max(8, left)}px` });
    }

    /** The passages a message cites, read once per message. @param {string} messageId */
    _passages(messageId) {
      let found = this._sources.get(messageId);
      if (!found) {
        const path = `sessions/${this.sessionId}/messages/${messageId}/sources/?${this._userQuery()}`;
        found = this.getData(path).then((data) => data.items);
        found.catch(() => this._sources.delete(messageId));
        this._sources.set(messageId, found);
      }
      return found;
    }

    /**
     * A form of the reply, every field type native; its answers go back as
     * the next message. Only the latest reply's form is live.
     * @param {{title: string, fields: Field[]}} spec @param {boolean} live
     * @param {boolean} titled whether to show the title (not when it repeats the question)
     */
    _form(spec, live, titled) {
      const form = /** @type {HTMLFormElement} */ (h("form", { class: "answer", part: "form" }));
      if (spec.title) form.setAttribute("aria-label", spec.title);
      if (spec.title && titled) form.append(h("strong", {}, [spec.title]));
      for (const field of spec.fields) form.append(this._field(field));
      const submit = h("button", { type: "submit", class: "primary" }, [this.t("submit")]);
      form.append(submit);
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        for (const group of form.querySelectorAll("fieldset[data-required]")) {
          const boxes = /** @type {NodeListOf<HTMLInputElement>} */ (group.querySelectorAll("input"));
          boxes[0].setCustomValidity([...boxes].some((b) => b.checked) ? "" : this.t("required"));
        }
        if (!form.reportValidity()) return;
        const answer = formAnswer(form, spec.fields);
        for (const control of form.querySelectorAll("input,select,textarea,button")) {
          control.setAttribute("disabled", "");
        }
        this.ask(answer.message, answer.shown).then(() => this._input.focus());
      });
      form.addEventListener("change", () => {
        for (const box of form.querySelectorAll("fieldset[data-required] input")) {
          /** @type {HTMLInputElement} */ (box).setCustomValidity("");
        }
      });
      if (!live) {
        for (const control of form.querySelectorAll("input,select,textarea,button")) {
          control.setAttribute("disabled", "");
        }
      } else {
        queueMicrotask(() => {
          const first = /** @type {HTMLElement | null} */ (form.querySelector("input,select,textarea"));
          // Only while the user is in the widget: a restored form never takes the page's focus.
          if (first && this.shadowRoot?.activeElement) first.focus();
        });
      }
      return form;
    }

    /** One field, as its native control. @param {Field} field */
    _field(field) {
      const id = `field-${++this._ids}`;
      const options = choicesOf(field);
      const star = field.required ? [h("span", { class: "req", "aria-hidden": "true" }, ["*"])] : [];
      if (field.type === "radio" || (field.type === "checkbox" && options.length)) {
        const group = h("fieldset", field.required ? { "data-required": "" } : {}, [
          h("legend", {}, [field.label, ...star]),
        ]);
        if (field.type === "radio") group.setAttribute("role", "radiogroup");
        for (const option of options) {
          const input = h("input", { type: field.type, name: field.name, value: option.value });
          if (field.required && field.type === "radio") input.setAttribute("required", "");
          group.append(h("label", { class: "choice" }, [input, option.label]));
        }
        return group;
      }
      if (field.type === "checkbox") {
        // A yes/no toggle always has an answer (unticked is "no"): never
        // "required" in the HTML sense, which would only accept "yes".
        const toggle = h("input", { type: "checkbox", name: field.name, value: "yes", id, role: "switch" });
        return h("label", { class: "choice", for: id }, [toggle, field.label]);
      }
      /** @type {HTMLElement} */
      let control;
      if (field.type === "select") {
        control = h("select", { name: field.name }, [h("option", { value: "" }, [field.placeholder || this.t("choose")])]);
        for (const option of options) control.append(h("option", { value: option.value }, [option.label]));
      } else if (field.type === "textarea") {
        control = h("textarea", { name: field.name, rows: "3" });
      } else {
        const type = ["number", "date", "email"].includes(field.type) ? field.type : "text";
        control = h("input", { type, name: field.name });
        if (type === "number") control.setAttribute("step", "any");
      }
      control.id = id;
      if (field.required) control.setAttribute("required", "");
      if (field.placeholder && field.type !== "select") control.setAttribute("placeholder", field.placeholder);
      for (const limit of /** @type {const} */ (["min", "max"])) {
        if (field[limit] !== undefined && field[limit] !== null) control.setAttribute(limit, String(field[limit]));
      }
      return h("div", { class: "fieldbox" }, [h("label", { for: id, class: "field" }, [field.label, ...star]), control]);
    }

    // --- sessions list --------------------------------------------------------

    async _toggleSessions() {
      const open = this._sessionsPanel.hidden;
      this._sessionsButton.setAttribute("aria-expanded", String(open));
      this._sessionsPanel.hidden = !open;
      if (!open) return;
      this._sessionsPanel.replaceChildren(h("p", {}, [this.t("thinking")]));
      try {
        const data = await this.getData(`sessions/?limit=20&${this._userQuery()}`);
        this._renderSessions(data.items);
      } catch (error) {
        this._sessionsPanel.hidden = true;
        this._sessionsButton.setAttribute("aria-expanded", "false");
        this._fail(error);
      }
    }

    /** @param {{id: string, title: string, updated_at: string}[]} sessions */
    _renderSessions(sessions) {
      if (!sessions.length) {
        this._sessionsPanel.replaceChildren(h("p", {}, [this.t("noSessions")]));
        return;
      }
      const list = h("ul", { "aria-label": this.t("sessions") });
      for (const session of sessions) {
        const button = h("button", { type: "button", "data-session": session.id }, [session.title]);
        if (session.id === this.sessionId) button.setAttribute("aria-current", "true");
        button.addEventListener("click", async () => {
          this._sessionsPanel.hidden = true;
          this._sessionsButton.setAttribute("aria-expanded", "false");
          try {
            await this.openSession(session.id);
            this._ready();
          } catch (error) {
            this._fail(error);
          }
          this._input.focus();
        });
        list.append(h("li", {}, [button]));
      }
      this._sessionsPanel.replaceChildren(list);
      /** @type {HTMLElement} */ (list.querySelector("button")).focus();
    }
  }

  if (!customElements.get("daneshyar-chat")) customElements.define("daneshyar-chat", DaneshyarChat);
})();
