// The composer: a multi-line text box (Enter sends, Shift+Enter adds a line) with slash-command
// completion from the gateway's command table (commands.list).

/** The commands whose name starts with what follows the slash, while no space was typed yet. */
export function matchCommands(commands, value) {
  const match = /^\/(\S*)$/.exec(value);
  if (!match) return [];
  const prefix = match[1].toLowerCase();
  return commands.filter((c) => c.name.startsWith(prefix));
}

/** Wires `input` and `list`; `onSubmit(text)` gets the text to send. */
export function createComposer({ form, input, list, onSubmit }) {
  let commands = [];
  let shown = [];
  let active = 0;

  function close() {
    shown = [];
    list.hidden = true;
    input.removeAttribute("aria-activedescendant");
    input.setAttribute("aria-expanded", "false");
  }

  function render() {
    list.replaceChildren();
    shown.forEach((command, index) => {
      const item = document.createElement("div");
      item.id = `completion-${index}`;
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(index === active));
      const usage = document.createElement("span");
      usage.className = "usage";
      usage.textContent = command.usage;
      item.append(usage, document.createTextNode(` — ${command.summary}`));
      item.onmousedown = (event) => {
        event.preventDefault();
        accept(index);
      };
      list.append(item);
    });
    list.hidden = shown.length === 0;
    input.setAttribute("aria-expanded", String(shown.length > 0));
    if (shown.length) input.setAttribute("aria-activedescendant", `completion-${active}`);
  }

  function update() {
    shown = matchCommands(commands, input.value);
    active = 0;
    if (shown.length === 1 && `/${shown[0].name}` === input.value.trim()) shown = [];
    shown.length ? render() : close();
  }

  function accept(index) {
    input.value = `/${shown[index].name} `;
    close();
    input.focus();
  }

  function submit() {
    const text = input.value;
    if (!text.trim() || input.disabled) return;
    close();
    onSubmit(text);
  }

  input.addEventListener("input", update);
  // Leaving the box closes the list a moment later; coming back cancels that close, else it hid
  // the list shown after (Tab then moved the focus instead of completing).
  let closing;
  input.addEventListener("blur", () => {
    closing = setTimeout(close, 100);
  });
  // Back in the box (or the command table arrived late): show what matches what is typed now.
  input.addEventListener("focus", () => {
    clearTimeout(closing);
    update();
  });
  input.addEventListener("keydown", (event) => {
    if (event.isComposing) return;
    if (shown.length) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        active = (active + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
        return render();
      }
      if (event.key === "Tab" || (event.key === "Enter" && !event.shiftKey)) {
        event.preventDefault();
        return accept(active);
      }
      if (event.key === "Escape") return close();
    }
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });

  return {
    /** The command table for completion. */
    setCommands(next) {
      commands = next;
      if (document.activeElement === input) update();
    },
  };
}
