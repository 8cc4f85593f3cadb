// Passkeys (WebAuthn): a button marked data-passkey="create" or "get" asks
// data-options for the ceremony's options, lets the browser make or use a
// passkey, and posts the answer to data-finish; the server says where to
// go next, or what went wrong (shown in the element data-status names).
(() => {
  const b64 = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "=")), (c) => c.charCodeAt(0)).buffer;
  const str = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

  // creationOptions and requestOptions turn the server's JSON (binary
  // fields base64url) into what navigator.credentials takes.
  const creationOptions = (o) => {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(o);
    return { ...o, challenge: b64(o.challenge), user: { ...o.user, id: b64(o.user.id) },
      excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: b64(c.id) })) };
  };
  const requestOptions = (o) => {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(o);
    return { ...o, challenge: b64(o.challenge), allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: b64(c.id) })) };
  };
  const answer = (cred) => {
    if (cred.toJSON) return cred.toJSON();
    const r = cred.response;
    const response = { clientDataJSON: str(r.clientDataJSON) };
    if (r.attestationObject) response.attestationObject = str(r.attestationObject);
    if (r.authenticatorData) response.authenticatorData = str(r.authenticatorData);
    if (r.signature) response.signature = str(r.signature);
    if (r.userHandle) response.userHandle = str(r.userHandle);
    return { id: cred.id, rawId: str(cred.rawId), type: cred.type, response };
  };

  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-passkey]");
    if (!button) return;
    const status = document.getElementById(button.dataset.status);
    const say = (text) => { if (status) status.textContent = text; };
    if (!window.PublicKeyCredential) { say("This browser does not support passkeys."); return; }
    button.disabled = true;
    say("");
    try {
      const res = await fetch(button.dataset.options, { method: "POST", credentials: "same-origin" });
      const options = await res.json();
      if (!res.ok) { say(options.error || "Passkeys are not available right now."); return; }
      const create = button.dataset.passkey === "create";
      const cred = create
        ? await navigator.credentials.create({ publicKey: creationOptions(options.publicKey) })
        : await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
      let url = button.dataset.finish;
      const nameInput = button.dataset.name && document.getElementById(button.dataset.name);
      if (nameInput) url += "?name=" + encodeURIComponent(nameInput.value);
      const done = await fetch(url, { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify(answer(cred)) });
      const next = await done.json();
      if (next.redirect) { window.location.assign(next.redirect); return; }
      say(next.error || "The passkey could not be used.");
    } catch (err) {
      say(err && err.name === "NotAllowedError" ? "The passkey request was cancelled or timed out." : "The passkey could not be used: " + err);
    } finally {
      button.disabled = false;
    }
  });
})();
