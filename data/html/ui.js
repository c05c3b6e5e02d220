// The live placement view of `gpuops serve --ui` (docs/UI.md). Every
// cluster-provided string is put in the page with textContent, never as
// markup.
"use strict";
(function () {
  const table = document.getElementById("matrix");
  const thead = table.tHead;
  const tbody = table.tBodies[0];
  const statusLine = document.getElementById("status");
  const logList = document.getElementById("log");
  const explain = document.getElementById("explain");
  let shape = "";       // node names and operands of the table as built
  let cellKeys = [];    // [op][node] "w|d|p" as shown
  let nodeKeys = [];    // per node, its header as shown
  let selected = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function wantWord(c) { return !c.d ? "no DaemonSet" : (c.w ? "wanted" : "not wanted"); }
  function cellClass(c) {
    const pod = c.p.toLowerCase();
    let cls = "cell pod-" + (["running", "pending", "terminating", "absent"].includes(pod) ? pod : "other");
    cls += c.w ? " wanted" : " unwanted";
    if (c.w && c.p === "absent") cls += " missing";
    if (!c.w && c.p === "Running") cls += " misplaced";
    if (!c.d && c.p === "absent") cls += " nods";
    return cls;
  }

  function fillCell(td, c) {
    td.className = cellClass(c);
    td.replaceChildren(el("span", "want", wantWord(c)), el("span", "pod", c.p));
    td.dataset.pod = c.p;
    td.dataset.wants = String(c.w);
  }

  function fillNode(th, n) {
    th.replaceChildren();
    th.appendChild(el("div", "node-name", n.name));
    const st = el("div", "node-state");
    st.appendChild(el("span", n.ready === "True" ? "ok" : "bad", "Ready=" + (n.ready || "?")));
    if (n.unschedulable) st.appendChild(el("span", "bad", "cordoned"));
    th.appendChild(st);
    for (const t of n.taints) th.appendChild(el("div", "taint", t));
    const chips = el("div", "chips");
    for (const k of Object.keys(n.labels)) {
      const v = n.labels[k];
      const chip = el("span", "chip" + (v === "false" ? " chip-false" : ""), k.replace(/^nvidia\.com\//, "") + "=" + v);
      chip.title = k + "=" + v;
      chips.appendChild(chip);
    }
    th.appendChild(chips);
  }

  function build(view) {
    thead.replaceChildren();
    tbody.replaceChildren();
    const hr = document.createElement("tr");
    hr.appendChild(el("th", "corner", "operand \\ node"));
    view.nodes.forEach(function (n, i) {
      const th = el("th", "node");
      th.dataset.node = n.name;
      fillNode(th, n);
      hr.appendChild(th);
      nodeKeys[i] = JSON.stringify(n);
    });
    thead.appendChild(hr);
    cellKeys = [];
    view.operands.forEach(function (op, oi) {
      const tr = document.createElement("tr");
      tr.appendChild(el("th", "operand", op));
      cellKeys[oi] = [];
      view.nodes.forEach(function (n, ni) {
        const c = view.cells[oi][ni];
        const td = document.createElement("td");
        td.dataset.node = n.name;
        td.dataset.operand = op;
        td.tabIndex = 0;
        fillCell(td, c);
        cellKeys[oi][ni] = c.w + "|" + c.d + "|" + c.p;
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
  }

  function update(view) {
    const heads = thead.rows[0].cells;
    view.nodes.forEach(function (n, i) {
      const key = JSON.stringify(n);
      if (nodeKeys[i] !== key) { fillNode(heads[i + 1], n); heads[i + 1].classList.add("changed"); nodeKeys[i] = key; }
    });
    view.operands.forEach(function (op, oi) {
      const row = tbody.rows[oi].cells;
      view.nodes.forEach(function (n, ni) {
        const c = view.cells[oi][ni];
        const key = c.w + "|" + c.d + "|" + c.p;
        if (cellKeys[oi][ni] === key) return;
        const td = row[ni + 1];
        fillCell(td, c);
        td.classList.add("changed");
        cellKeys[oi][ni] = key;
      });
    });
  }

  // The lab's checklist (serve --lab --ui --grade-dir): one item per step,
  // its state as a word (pending, passed, failed) and a failure's reason
  // (the diff) below it.
  const gradeBox = document.getElementById("grade");
  const gradeStatus = document.getElementById("grade-status");
  const checklist = document.getElementById("checklist");
  let shownChecklist = "";
  function showChecklist(c) {
    const key = JSON.stringify(c);
    if (key === shownChecklist) return;
    shownChecklist = key;
    gradeBox.hidden = false;
    const passed = c.steps.filter(function (s) { return s.state === "passed"; }).length;
    let st = c.grades === 0 ? "not graded yet" : passed + " of " + c.steps.length + " steps passed";
    if (c.grading) st += " (grading...)";
    if (c.error) st += "; " + c.error;
    gradeStatus.textContent = "lab grade of " + c.dir + ": " + st;
    checklist.replaceChildren();
    for (const s of c.steps) {
      const li = el("li", "step " + s.state);
      li.dataset.step = String(s.step);
      li.dataset.state = s.state;
      li.appendChild(el("span", "state", s.state));
      li.appendChild(el("span", "title", " step " + s.step + (s.title ? ": " + s.title : "")));
      if (s.state === "failed") li.appendChild(el("pre", "reason", s.reason));
      checklist.appendChild(li);
    }
  }

  let shownView = "";
  function show(doc) {
    if (doc.checklist) showChecklist(doc.checklist);
    const viewKey = JSON.stringify([doc.view, doc.log]);
    document.body.dataset.seq = String(doc.seq);
    if (viewKey === shownView) return;  // only the checklist changed
    shownView = viewKey;
    const view = doc.view;
    for (const e of document.querySelectorAll(".changed")) e.classList.remove("changed");
    const s = JSON.stringify([view.nodes.map(function (n) { return n.name; }), view.operands]);
    if (s !== shape) { build(view); shape = s; } else { update(view); }
    logList.replaceChildren();
    for (let i = doc.log.length - 1; i >= 0 && i >= doc.log.length - 30; --i) logList.appendChild(el("li", "", doc.log[i]));
    statusLine.textContent = "live: namespace " + view.namespace + ", " + view.nodes.length + " nodes, " +
      view.operands.length + " operands (update " + doc.seq + ")";
    statusLine.className = "status live";
  }

  table.addEventListener("click", function (ev) {
    const td = ev.target.closest("td.cell");
    if (!td) return;
    if (selected) selected.classList.remove("selected");
    selected = td;
    td.classList.add("selected");
    explain.textContent = "...";
    const q = new URLSearchParams({ node: td.dataset.node, operand: td.dataset.operand });
    fetch("api/explain?" + q.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (t) { explain.textContent = "$ gpuops explain " + td.dataset.node + " " + td.dataset.operand + "\n" + t; })
      .catch(function (e) { explain.textContent = "explain failed: " + e; });
  });
  table.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && ev.target.closest("td.cell")) ev.target.click();
  });

  const source = new EventSource("events");
  source.addEventListener("view", function (ev) { show(JSON.parse(ev.data)); });
  source.onerror = function () {
    statusLine.textContent = "disconnected: is gpuops serve still running? (retrying)";
    statusLine.className = "status down";
  };
})();
