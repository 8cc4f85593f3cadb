// Small progressive enhancements; every page works without them.
document.documentElement.classList.add("js");

document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy-target]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copyTarget);
  if (!source) return;
  const text = source.value !== undefined ? source.value : source.textContent;
  try {
    await navigator.clipboard.writeText(text.trim());
  } catch {
    if (source.select) { source.select(); document.execCommand("copy"); }
  }
  const label = button.textContent;
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = label; }, 1500);
});

// A form marked data-confirm asks first; once accepted it carries
// confirmed=yes, so the server acts at once. Without JavaScript the server
// shows a confirmation page instead.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.dataset.confirm) return;
  if (!window.confirm(form.dataset.confirm)) {
    event.preventDefault();
    return;
  }
  if (!form.querySelector('input[name="confirmed"]')) {
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = "confirmed";
    input.value = "yes";
    form.appendChild(input);
  }
});

// A select marked data-autosubmit (the workspace switcher) submits its form
// as soon as another option is chosen.
document.addEventListener("change", (event) => {
  const select = event.target.closest("select[data-autosubmit]");
  if (select && select.form) select.form.requestSubmit();
});

// Selecting the one-time secret on focus makes copying by keyboard easy.
document.addEventListener("focusin", (event) => {
  if (event.target.matches && event.target.matches("input[readonly][data-testid=new-key-secret]")) {
    event.target.select();
  }
});

// QR designer: the preview, the downloads and the contrast line follow the
// form as it changes — colours, margin, error correction, module style,
// frame text, removing the logo (the same /qr renderer; "Update preview"
// does the same without JavaScript). A new logo shows once saved.
(() => {
  const form = document.querySelector("form[data-qr-form]");
  const img = document.querySelector("img[data-qr-preview]");
  if (!form) return;
  const note = form.querySelector("[data-qr-contrast]");
  const downloads = document.querySelectorAll("[data-qr-download]");
  const luminance = (hex) => {
    const n = parseInt(hex.replace("#", ""), 16);
    const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
  };
  const ratio = (a, b) => { const x = luminance(a), y = luminance(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const inRange = (v, lo, hi) => /^\d+$/.test(v) && +v >= lo && +v <= hi;
  // A colour's hex field and its picker show one value: typing a colour
  // ("#1f2a5c", "1F2A5C" or "#fff") sets the picker, picking one writes
  // the field. Without JavaScript the server takes the one that changed.
  const hexOf = (s) => {
    let h = String(s || "").trim().replace(/^#/, "");
    if (/^[0-9a-fA-F]{3}$/.test(h)) h = h.replace(/./g, "$&$&");
    return /^[0-9a-fA-F]{6}$/.test(h) ? "#" + h.toLowerCase() : "";
  };
  const colour = (name) => {
    const field = form.querySelector(`input[name="${name}_hex"]`);
    return field ? hexOf(field.value) : hexOf(form.querySelector(`input[name="${name}"]`).value);
  };
  form.addEventListener("input", (event) => {
    const el = event.target;
    if (el.dataset.colourHex !== undefined) {
      const hex = hexOf(el.value);
      if (hex) form.querySelector("#" + el.dataset.colourHex).value = hex;
    } else if (el.dataset.colourPicker !== undefined) {
      form.querySelector("#" + el.dataset.colourPicker).value = el.value.toLowerCase();
    }
  });
  // The field shows the colour in its full form once the person moves on.
  form.addEventListener("change", (event) => {
    const el = event.target;
    if (el.dataset.colourHex !== undefined && hexOf(el.value)) el.value = hexOf(el.value);
  });
  const update = () => {
    if (!img) return; // no preview to follow (the options were refused): "Update preview" asks again
    const f = new FormData(form);
    const fg = colour("fg"), bg = colour("bg");
    if (!fg || !bg) {
      img.style.opacity = "0.25";
      downloads.forEach((a) => a.setAttribute("aria-disabled", "true"));
      return;
    }
    const r = Math.floor(ratio(fg, bg) * 100) / 100;
    const ok = r >= 3;
    note.classList.toggle("error", !ok);
    note.textContent = `Contrast ${r}:1. ` + (ok ? "Scanners need a dark code on a light background with a contrast of at least 3:1; lower pairs are refused."
      : "Too low: scanners need at least 3:1. Choose a darker foreground or a lighter background.");
    const size = f.has("size") ? String(f.get("size")) : "512", margin = String(f.get("margin"));
    const frame = String(f.get("frame") || "").trim();
    if (!ok || !inRange(size, 64, 4096) || !inRange(margin, 0, 16) || [...frame].length > 32) {
      img.style.opacity = "0.25";
      downloads.forEach((a) => a.setAttribute("aria-disabled", "true"));
      return;
    }
    const q = new URLSearchParams({ size, margin, ecc: String(f.get("ecc")), fg: fg.slice(1).toLowerCase(), bg: bg.slice(1).toLowerCase(),
      modules: String(f.get("modules") || "square"), frame });
    if (f.get("nologo") === "1") q.set("nologo", "1");
    img.style.opacity = "";
    img.src = img.dataset.qrPreview + q;
    downloads.forEach((a) => { a.href = a.dataset.qrDownload + q + "&download=1"; a.removeAttribute("aria-disabled"); });
  };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
})();

// Scans range picker: a preset applies as soon as it is chosen; the From
// and To days show only for a custom range (without JavaScript they are
// always there, with the Show button).
(() => {
  const picker = document.querySelector("form.range-picker");
  if (!picker) return;
  const range = picker.querySelector('select[name="range"]');
  const custom = picker.querySelector(".custom-range");
  const hint = picker.querySelector(".hint");
  const sync = () => {
    custom.hidden = range.value !== "custom";
    if (hint) hint.hidden = true;
  };
  sync();
  picker.addEventListener("change", (event) => {
    if (!event.target.matches("select")) return;
    sync();
    if (range.value !== "custom") picker.requestSubmit();
  });
})();

// A checkbox marked data-select-all="name" (hidden until this runs: without
// script it could do nothing) ticks or clears every checkbox of that name
// in its form, and shows whether all, some or none are ticked.
for (const all of document.querySelectorAll("input[data-select-all]")) {
  const boxes = () => document.querySelectorAll(`input[type=checkbox][name="${all.dataset.selectAll}"][form="${all.getAttribute("form")}"]`);
  const show = () => {
    const ticked = [...boxes()].filter((b) => b.checked).length;
    all.checked = ticked > 0 && ticked === boxes().length;
    all.indeterminate = ticked > 0 && ticked < boxes().length;
  };
  all.hidden = false;
  all.addEventListener("change", () => {
    for (const b of boxes()) b.checked = all.checked;
    show();
  });
  document.addEventListener("change", (event) => {
    if (event.target !== all && event.target.matches && event.target.matches(`input[name="${all.dataset.selectAll}"]`)) show();
  });
  show();
}

// Destinations (the link page): the rows' Add, Remove, ↑ and ↓ buttons
// work in place, without a request. A new row is a clone of the form's
// <template data-template="rule|variant">; after every change the rows
// are renumbered — field names ("rule2_os"), ids, test ids, button values
// ("up:2"), labels ("Move rule 3 up") and the hidden counts — so the form
// posts exactly what the server's own row buttons would have left. Without
// JavaScript those buttons post the form and the page comes back changed.
(() => {
  const form = document.querySelector("form[data-destinations]");
  if (!form) return;
  const status = form.querySelector("[data-dest-status]");
  const say = (text) => { if (status) status.textContent = text; };
  const list = (kind) => form.querySelector(`[data-list="${kind}"]`);
  const rows = (kind) => [...list(kind).children].filter((el) => el.dataset.row === kind);
  const max = (kind) => Number(list(kind).dataset.max);
  const label = { rule: "Rule", variant: "Variant" };

  // renumber rewrites every index-bearing attribute of a row to i.
  const renumber = (row, kind, i) => {
    const swaps = [
      ["name", new RegExp(`^${kind}\\d+_`), `${kind}${i}_`],
      ["id", new RegExp(`^${kind}\\d+-`), `${kind}${i}-`],
      ["for", new RegExp(`^${kind}\\d+-`), `${kind}${i}-`],
      ["aria-describedby", new RegExp(`^${kind}\\d+-`), `${kind}${i}-`],
      ["data-testid", new RegExp(`^(${kind}(?:-[a-z]+)?-)\\d+`), `$1${i}`],
      ["aria-label", new RegExp(`(${kind}) \\d+`, "i"), `$1 ${i + 1}`],
    ];
    for (const el of [row, ...row.querySelectorAll("*")]) {
      for (const [attr, re, to] of swaps) {
        const v = el.getAttribute(attr);
        if (v !== null) el.setAttribute(attr, v.replace(re, to));
      }
      if (el.matches('button[name="action"]')) el.value = el.value.replace(/:\d+$/, `:${i}`);
      if (el.matches("[data-ordinal]")) el.textContent = String(i + 1);
    }
  };

  // sync renumbers a list and updates what depends on its length.
  const sync = (kind) => {
    const all = rows(kind);
    all.forEach((row, i) => {
      renumber(row, kind, i);
      const up = row.querySelector('[data-move="up"]'), down = row.querySelector('[data-move="down"]');
      if (up) up.disabled = i === 0;
      if (down) down.disabled = i === all.length - 1;
    });
    form.querySelector(`input[data-count="${kind}"]`).value = String(all.length);
    const empty = form.querySelector(`[data-empty="${kind}"]`);
    if (empty) empty.hidden = all.length > 0;
    const add = form.querySelector(`[data-add="${kind}"]`);
    add.disabled = all.length >= max(kind);
    if (kind === "variant") add.textContent = all.length === 0 ? "Split visitors A/B" : "Add a variant";
  };

  const addRow = (kind, weight) => {
    const row = form.querySelector(`template[data-template="${kind}"]`).content.firstElementChild.cloneNode(true);
    if (weight !== undefined) row.querySelector('input[name$="_weight"]').value = weight;
    list(kind).appendChild(row);
    return row;
  };

  form.addEventListener("click", (event) => {
    const button = event.target.closest('button[name="action"]');
    if (!button || button.value === "save" || button.disabled) return;
    const [verb] = button.value.split(":");
    const row = button.closest("[data-row]");
    const kind = row ? row.dataset.row : button.dataset.add;
    if (!kind) return;
    event.preventDefault();
    const all = rows(kind);
    const n = all.indexOf(row);
    if (verb === "add-rule" || verb === "add-variant") {
      if (all.length >= max(kind)) return;
      let added;
      if (kind === "variant" && all.length === 0) {
        added = addRow(kind, "50");
        addRow(kind, "50");
      } else {
        added = addRow(kind, kind === "variant" ? "0" : undefined);
      }
      sync(kind);
      added.querySelector("input:not([type=hidden])").focus();
      say(`${label[kind]} ${rows(kind).indexOf(added) + 1} added.`);
    } else if (verb === "remove-rule" || verb === "remove-variant") {
      const next = all[n + 1] || all[n - 1];
      row.remove();
      sync(kind);
      (next ? next.querySelector("[data-remove]") : form.querySelector(`[data-add="${kind}"]`)).focus();
      say(`${label[kind]} ${n + 1} removed.`);
    } else if (verb === "up" || verb === "down") {
      const other = verb === "up" ? all[n - 1] : all[n + 1];
      if (!other) return;
      if (verb === "up") other.before(row); else other.after(row);
      sync(kind);
      const again = row.querySelector(`[data-move="${verb}"]`);
      (again.disabled ? row.querySelector(`[data-move="${verb === "up" ? "down" : "up"}"]`) : again).focus();
      say(`${label[kind]} moved to position ${rows(kind).indexOf(row) + 1}.`);
    }
  });

  // A rule's countries are a comma-separated list; the suggestions (the
  // shared <datalist>) complete the code being typed after the last comma.
  const choices = document.getElementById("country-choices");
  if (choices) {
    const codes = [...choices.options].map((o) => o.value);
    const suggest = (field) => {
      const typed = field.value;
      const cut = typed.lastIndexOf(",");
      const prefix = cut < 0 ? "" : typed.slice(0, cut + 1).replace(/\s*$/, " ");
      [...choices.options].forEach((o, i) => { o.value = prefix + codes[i]; });
    };
    form.addEventListener("input", (event) => { if (event.target.matches("[data-country-list]")) suggest(event.target); });
    form.addEventListener("focusin", (event) => { if (event.target.matches("[data-country-list]")) suggest(event.target); });
    document.addEventListener("focusin", (event) => {
      if (event.target.matches && event.target.matches('input[list="country-choices"]:not([data-country-list])')) {
        [...choices.options].forEach((o, i) => { o.value = codes[i]; });
      }
    });
  }
})();

// "Fill from template" (web/utm.templ): choosing a template fills the five
// UTM fields of its form at once, from the option's data attributes; a
// parameter the template leaves out is emptied. Without JavaScript the
// "Apply" button posts the form and the server does the same.
document.addEventListener("change", (event) => {
  const select = event.target.closest("select[data-utm-template]");
  if (!select || !select.form) return;
  const option = select.selectedOptions[0];
  if (!option || !option.value) return;
  for (const name of ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]) {
    const input = select.form.elements.namedItem(name);
    if (!input) continue;
    input.value = option.dataset[name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())] || "";
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }
});
