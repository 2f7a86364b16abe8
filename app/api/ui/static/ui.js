// The results viewer: fetches each page's fragment with the API key (if any) as the bearer
// token, wires filters, sorting, actions and downloads, and follows a running run's event
// stream (read with fetch, since EventSource cannot send the Authorization header).
(() => {
  "use strict";
  const KEY = "eval-execution.api-key";
  const root = document.body.dataset.root || "";
  const main = document.getElementById("content");
  const keyForm = document.getElementById("key-form");
  const forget = document.getElementById("forget-key");
  const state = {
    filters: {}, sort: null, stream: null, refresh: null, poll: null, typing: null, refocus: false,
  };

  class NeedKey extends Error {}

  function headers(extra) {
    const all = new Headers(extra || {});
    const key = sessionStorage.getItem(KEY);
    if (key) all.set("Authorization", `Bearer ${key}`);
    return all;
  }

  async function api(url, init = {}) {
    const response = await fetch(url, { ...init, headers: headers(init.headers) });
    if (response.status === 401) {
      askForKey(sessionStorage.getItem(KEY) ? "That key was refused." : "");
      throw new NeedKey();
    }
    return response;
  }

  async function problem(response) {
    try {
      const body = await response.json();
      return `${response.status} ${body.title || ""}: ${body.detail || ""}`;
    } catch {
      return `${response.status} ${response.statusText}`;
    }
  }

  function askForKey(message) {
    sessionStorage.removeItem(KEY);
    main.hidden = true;
    keyForm.hidden = false;
    document.getElementById("key-message").textContent = message;
    document.getElementById("key-input").focus();
  }

  function showError(text) {
    const box = document.createElement("div");
    box.className = "problem";
    box.setAttribute("role", "alert");
    const title = document.createElement("h1");
    title.textContent = "Not available";
    const detail = document.createElement("p");
    detail.id = "problem";
    detail.textContent = text;
    box.append(title, detail);
    main.replaceChildren(box);
  }

  async function load() {
    let response;
    try {
      response = await api(main.dataset.fragment);
    } catch (error) {
      if (!(error instanceof NeedKey)) showError(String(error));
      return;
    }
    if (!response.ok) {
      showError(await problem(response));
      return;
    }
    // The fragment is HTML the service rendered with every value escaped.
    main.innerHTML = await response.text();
    main.hidden = false;
    forget.hidden = !sessionStorage.getItem(KEY);
    wire();
  }

  // At most one refresh pending (a throttle, not a debounce: a run whose events never pause
  // still shows its progress). The pause grows with the run, so a run of thousands of
  // cases is re-fetched every few seconds rather than on every event.
  function scheduleRefresh(delay) {
    if (delay === 0) clearTimeout(state.refresh);  // after a button: now
    else if (state.refresh !== null) return;
    const run = main.querySelector("#run");
    const rows = run ? Number(run.dataset.done) : main.querySelectorAll("tbody tr").length;
    const wait = delay ?? Math.min(5000, 250 + rows);
    state.refresh = setTimeout(() => {
      state.refresh = null;
      load();
    }, wait);
  }

  function rowsOf(table) {
    return Array.from(table.querySelectorAll("tbody tr"));
  }

  function matches(row, name, value) {
    if (!value) return true;
    const data = row.dataset[name] || "";
    if (name === "text") return data.toLowerCase().includes(value.toLowerCase());
    if (name === "missed") return data.split(" ").includes(value);
    return data === value;
  }

  function applyFilters(table) {
    let shown = 0;
    for (const row of rowsOf(table)) {
      row.hidden = !Object.entries(state.filters).every(([n, v]) => matches(row, n, v));
      if (!row.hidden) shown += 1;
    }
    const counter = document.getElementById("shown");
    if (counter) counter.textContent = `${shown} of ${rowsOf(table).length} shown`;
  }

  function applySort(table) {
    if (!state.sort) return;
    const { key, numeric, descending } = state.sort;
    const value = (row) => {
      const raw = row.dataset[key] || "";
      if (!numeric) return raw;
      return raw === "" ? -Infinity : Number(raw);
    };
    const body = table.querySelector("tbody");
    const sorted = rowsOf(table).sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      const order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    body.append(...sorted);
    for (const button of table.querySelectorAll("[data-sort]")) {
      const th = button.closest("th");
      if (button.dataset.sort === key) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
  }

  function wireTable() {
    const table = main.querySelector("table.grid");
    if (!table || !main.querySelector("[data-filter], [data-sort]")) return;  // the runs list
    for (const control of main.querySelectorAll("[data-filter]")) {
      const name = control.dataset.filter;
      if (state.filters[name]) control.value = state.filters[name];
      control.addEventListener("input", () => {
        state.filters[name] = control.value;
        applyFilters(table);
      });
    }
    for (const button of table.querySelectorAll("[data-sort]")) {
      button.addEventListener("click", () => {
        const key = button.dataset.sort;
        const descending = state.sort && state.sort.key === key ? !state.sort.descending : false;
        state.sort = { key, numeric: button.dataset.type === "number", descending };
        applySort(table);
      });
    }
    applySort(table);
    applyFilters(table);
  }

  // The run page's case table is filtered, sorted and paged by the service: a change asks
  // for the fragment again with the new query, which the page's own address keeps too.
  function ask(query) {
    const base = main.dataset.fragment.split("?")[0];
    main.dataset.fragment = query ? `${base}?${query}` : base;
    history.replaceState(null, "", query ? `${location.pathname}?${query}` : location.pathname);
    load();
  }

  function wireQuery() {
    const form = document.getElementById("case-query");
    if (!form) return;
    const submit = () => {
      const fields = new URLSearchParams(new FormData(form));
      for (const [name, value] of Array.from(fields)) if (!value) fields.delete(name);
      ask(fields.toString());
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submit();
    });
    for (const select of form.querySelectorAll("select")) select.addEventListener("change", submit);
    const text = form.querySelector("input[name=text]");
    text.addEventListener("input", () => {
      clearTimeout(state.typing);
      state.typing = setTimeout(() => {
        state.refocus = true;
        submit();
      }, 300);
    });
    if (state.refocus) {
      state.refocus = false;
      text.focus();
      text.setSelectionRange(text.value.length, text.value.length);
    }
    for (const button of main.querySelectorAll("[data-query]")) {
      button.addEventListener("click", () => ask(button.dataset.query));
    }
    // A queue chosen by hand: the ticked cases, kept in the address as `cases=`.
    const review = document.getElementById("review-picked");
    const ticked = () => Array.from(main.querySelectorAll("input.pick-case:checked"), (box) => box.value);
    // On the table, which each load replaces (a listener on `main` would pile up).
    document.getElementById("cases").addEventListener("change", () => {
      review.disabled = ticked().length === 0;
    });
    review.addEventListener("click", () => {
      const fields = new URLSearchParams(main.dataset.fragment.split("?")[1] || "");
      fields.set("cases", ticked().join(","));
      fields.delete("page");
      ask(fields.toString());
    });
  }

  function wirePicking() {
    const button = document.getElementById("compare-picked");
    if (!button) return;
    const picked = () => Array.from(main.querySelectorAll("input.pick:checked"));
    main.addEventListener("change", () => {
      button.disabled = picked().length !== 2;
    });
    button.addEventListener("click", () => {
      const rows = picked().map((box) => box.closest("tr"));
      rows.sort((a, b) => a.dataset.created.localeCompare(b.dataset.created));
      const [base, head] = rows.map((row) => row.querySelector("input.pick").value);
      location.href = `${root}/ui/compare?base=${encodeURIComponent(base)}&head=${encodeURIComponent(head)}`;
    });
  }

  function say(text) {
    const line = document.getElementById("action-message");
    if (line) line.textContent = text;
  }

  function wireActions() {
    for (const button of main.querySelectorAll("[data-post]")) {
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const response = await api(button.dataset.post, { method: "POST" });
          if (!response.ok) return say(await problem(response));
          if (button.dataset.follow !== undefined) {
            const run = await response.json();
            location.href = `${root}/ui/runs/${encodeURIComponent(run.id)}`;
          } else {
            scheduleRefresh(0);
          }
        } catch (error) {
          if (!(error instanceof NeedKey)) say(String(error));
        } finally {
          button.disabled = false;
        }
      });
    }
    for (const button of main.querySelectorAll("[data-download]")) {
      button.addEventListener("click", async () => {
        try {
          const response = await api(button.dataset.download, { headers: { Accept: button.dataset.accept } });
          if (!response.ok) return say(await problem(response));
          const link = document.createElement("a");
          link.href = URL.createObjectURL(await response.blob());
          link.download = button.dataset.filename;
          link.click();
          setTimeout(() => URL.revokeObjectURL(link.href), 10000);
        } catch (error) {
          if (!(error instanceof NeedKey)) say(String(error));
        }
      });
    }
  }

  // The reviewed cases as a suite, posted back as a new run on the same targets.
  function wireRerun() {
    const button = main.querySelector("#run-reviewed");
    if (!button) return;
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const exported = await api(button.dataset.suite);
        if (!exported.ok) return say(await problem(exported));
        const body = { ...(await exported.json()), target: button.dataset.target };
        if (button.dataset.judge) body.judge_target = button.dataset.judge;
        const response = await api(button.dataset.runs, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        if (!response.ok) return say(await problem(response));
        const run = await response.json();
        location.href = `${root}/ui/runs/${encodeURIComponent(run.id)}`;
      } catch (error) {
        if (!(error instanceof NeedKey)) say(String(error));
      } finally {
        button.disabled = false;
      }
    });
  }

  async function follow(url) {
    let lastId = null;
    while (state.stream === url) {
      const extra = { Accept: "text/event-stream" };
      if (lastId) extra["Last-Event-ID"] = lastId;
      let response;
      try {
        response = await api(url, { headers: extra });
      } catch {
        break;
      }
      if (!response.ok || !response.body) break;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer = (buffer + value).replace(/\r\n/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block.split("\n").filter((l) => l && !l.startsWith(":")).map((l) => {
              const at = l.indexOf(":");
              return [l.slice(0, at), l.slice(at + 1).trimStart()];
            }),
          );
          if (fields.id) lastId = fields.id;
          if (fields.event) scheduleRefresh();
          if (fields.event === "run_completed") {
            state.stream = null;
            return;
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    if (state.stream === url) state.stream = null;
  }

  function wireLive() {
    const run = document.getElementById("run");
    if (run && run.dataset.events && state.stream !== run.dataset.events) {
      state.stream = run.dataset.events;
      follow(run.dataset.events);
    }
    clearTimeout(state.poll);
    if (main.querySelector("#runs-table tr[data-active]")) state.poll = setTimeout(load, 2000);
  }

  // The case page's review form: PUT the verdict (the service keeps the graders' beside it).
  function wireReview() {
    const form = main.querySelector("form#review");
    if (!form) return;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const body = { verdict: data.get("verdict") };
      if (data.get("score") !== "") body.score = Number(data.get("score"));
      if (String(data.get("comment")).trim()) body.comment = String(data.get("comment")).trim();
      try {
        const response = await api(form.dataset.url, {
          method: "PUT",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        if (!response.ok) return say(await problem(response));
        const next = event.submitter && event.submitter.dataset.then === "next" && document.getElementById("next");
        if (next) next.click();
        else scheduleRefresh(0);
      } catch (error) {
        if (!(error instanceof NeedKey)) say(String(error));
      }
    });
    const remove = main.querySelector("#review-remove");
    if (remove) {
      remove.addEventListener("click", async () => {
        try {
          const response = await api(form.dataset.url, { method: "DELETE" });
          if (!response.ok) return say(await problem(response));
          scheduleRefresh(0);
        } catch (error) {
          if (!(error instanceof NeedKey)) say(String(error));
        }
      });
    }
  }

  // The run page's tags: PATCH the run with the words typed (spaces or commas between).
  function wireTags() {
    const form = main.querySelector("form#tags-form");
    if (!form) return;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const tags = String(new FormData(form).get("tags")).split(/[\s,]+/).filter(Boolean);
      try {
        const response = await api(form.dataset.url, {
          method: "PATCH",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ tags }),
        });
        if (!response.ok) return say(await problem(response));
        scheduleRefresh(0);
      } catch (error) {
        if (!(error instanceof NeedKey)) say(String(error));
      }
    });
  }

  function wire() {
    wireReview();
    wireTags();
    wireTable();
    wireQuery();
    wirePicking();
    wireActions();
    wireRerun();
    wireLive();
  }

  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById("key-input").value.trim());
    document.getElementById("key-input").value = "";
    keyForm.hidden = true;
    load();
  });
  forget.addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    location.reload();
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
    const link = { p: "previous", n: "next" }[event.key];
    const target = link && document.getElementById(link);
    if (target) target.click();
  });
  load();
})();
