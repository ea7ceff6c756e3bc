// Runs a d3viz page's script against a minimal DOM and drives it as a user would, then prints
// what it saw as JSON (tests/test_d3viz.py reads it). Usage: node d3viz_page.js PAGE.html
"use strict";
const fs = require("fs");
const page = fs.readFileSync(process.argv[2], "utf8");
const data = page.match(/<script type="application\/json" id="graph-data">([\s\S]*?)<\/script>/)[1];
const code = page.match(/<script>([\s\S]*?)<\/script>/)[1];

class Element {
  constructor(tag) {
    Object.assign(this, {tag, attrs: {}, children: [], listeners: {}, textContent: "", hidden: false,
                         clientWidth: 800, clientHeight: 600});
  }
  setAttribute(key, value) { this.attrs[key] = String(value); }
  appendChild(child) { this.children.push(child); return child; }
  replaceChildren() { this.children = []; }
  addEventListener(name, fn) { (this.listeners[name] = this.listeners[name] || []).push(fn); }
  fire(name, event = {}) {
    const full = {stopPropagation() {}, preventDefault() {}, clientX: 0, clientY: 0, deltaY: 100, ...event};
    for (const fn of this.listeners[name] || []) fn(full);
  }
  insertRow() {
    const row = new Element("tr");
    row.insertCell = () => row.appendChild(new Element("td"));
    return this.appendChild(row);
  }
}

const elements = {};
for (const id of ["view", "scene", "edges", "nodes", "panel", "back", "reset", "profile", "where"]) {
  elements[id] = new Element(id);
}
elements["graph-data"] = Object.assign(new Element("script"), {textContent: data});
const windowListeners = {};
global.document = {getElementById: id => elements[id], createElementNS: (ns, tag) => new Element(tag),
                   createElement: tag => new Element(tag)};
global.window = {addEventListener: (name, fn) => { windowListeners[name] = fn; },
                 removeEventListener: name => { delete windowListeners[name]; }, prompt: () => "renamed"};
new Function(code)();

const {nodes, edges, panel, scene} = elements;
const seen = {main: {nodes: nodes.children.length, edges: edges.children.length}};
const labels = () => nodes.children.map(n => n.children[1].textContent);
const click = node => { node.fire("mousedown"); windowListeners.mouseup(); };

const first = nodes.children[0];
first.fire("mouseenter");
seen.hoverPanel = !panel.hidden && panel.children[0].textContent;
first.fire("mouseleave");
seen.panelHiddenAfterLeave = panel.hidden;

first.fire("mousedown", {clientX: 0, clientY: 0});
const before = nodes.children[0].attrs.transform;
windowListeners.mousemove({clientX: 50, clientY: 30});
windowListeners.mouseup();
seen.dragged = nodes.children[0].attrs.transform !== before;
elements.reset.onclick();
seen.resetRestores = nodes.children[0].attrs.transform === before;

const nested = nodes.children.findIndex(n => n.attrs.class.includes("nested"));
if (nested >= 0) {
  click(nodes.children[nested]);
  const buttons = panel.children.filter(c => c.tag === "button").map(b => b.textContent);
  seen.selectedButtons = buttons;
  panel.children.find(c => c.textContent === "Edit label").onclick();
  seen.renamed = labels().includes("renamed");
  panel.children.find(c => c.textContent === "Open inner graph").onclick();
  seen.inner = {nodes: nodes.children.length, where: elements.where.textContent, back: !elements.back.hidden};
  elements.back.onclick();
  seen.backToMain = nodes.children.length === seen.main.nodes;
}
seen.profileButton = !elements.profile.hidden;
if (seen.profileButton) {
  const fills = () => nodes.children.map(n => n.children[0].attrs.fill);
  const plain = fills();
  elements.profile.onclick();
  seen.profileRecolours = fills().some((f, i) => f !== plain[i]);
}
const view = scene.attrs.transform;
elements.view.fire("wheel", {clientX: 100, clientY: 100});
seen.zoomed = scene.attrs.transform !== view;
elements.view.fire("mousedown", {clientX: 0, clientY: 0});
windowListeners.mousemove({clientX: 40, clientY: 40});
windowListeners.mouseup();
seen.panned = scene.attrs.transform !== view;
console.log(JSON.stringify(seen));
