// Small progressive enhancements; every page works without them.
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
