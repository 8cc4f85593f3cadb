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

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
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
