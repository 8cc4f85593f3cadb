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
  if (!form || !img) return;
  const note = form.querySelector("[data-qr-contrast]");
  const downloads = document.querySelectorAll("[data-qr-download]");
  const luminance = (hex) => {
    const n = parseInt(hex.replace("#", ""), 16);
    const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
  };
  const ratio = (a, b) => { const x = luminance(a), y = luminance(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const inRange = (v, lo, hi) => /^\d+$/.test(v) && +v >= lo && +v <= hi;
  const update = () => {
    const f = new FormData(form);
    const fg = String(f.get("fg")), bg = String(f.get("bg"));
    if (!/^#[0-9a-fA-F]{6}$/.test(fg) || !/^#[0-9a-fA-F]{6}$/.test(bg)) return;
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
