// Uploads refused in the browser (over the server's size limit, a type not taken, a second file where one is
// meant) are said in words under their uploader, and the refused file is taken off the list so that the list
// holds only what the import will read. Installed once per document; watches every uploader on the page.
(function () {
  if (window.__annotatorUploadRefusals) return;
  window.__annotatorUploadRefusals = true;
  const MARK = "upload-refusal";

  function refusalOf(chip) {
    const name = (chip.querySelector('[data-testid="stFileChipName"]') || {}).textContent || "The file";
    const alert = chip.querySelector('[role="alert"]');
    const reason = alert ? alert.textContent.replace(/^Error:\s*/, "").trim() : "";
    return name + " was not taken" + (reason ? ": " + reason : ".");
  }

  function say(uploader, lines) {
    let note = uploader.parentElement.querySelector(":scope > ." + MARK);
    if (!lines.length) {
      if (note) note.remove();
      return;
    }
    if (!note) {
      note = document.createElement("p");
      note.className = MARK;
      note.setAttribute("data-testid", MARK);
      note.setAttribute("role", "alert");
      note.style.cssText = "color:#b3261e;margin:0.25rem 0 0.5rem;font-size:0.9rem";
      uploader.insertAdjacentElement("afterend", note);
    }
    note.textContent = lines.join(" ") + " It is not on the list and will not be imported.";
  }

  function check() {
    document.querySelectorAll('[data-testid="stFileUploader"]').forEach((uploader) => {
      const chips = Array.from(uploader.querySelectorAll('[data-testid="stFileChip"]'));
      const refused = chips.filter((c) => c.getAttribute("aria-invalid") === "true");
      if (refused.length) {
        say(uploader, refused.map(refusalOf));
        refused.forEach((c) => {
          const remove = c.querySelector('button[aria-label^="Remove"]');
          if (remove) remove.click();
        });
      } else if (chips.length) {
        say(uploader, []);  // a file was taken since: the old refusal no longer applies
      }
    });
  }

  new MutationObserver(check).observe(document.body, { childList: true, subtree: true, attributes: true,
                                                       attributeFilter: ["aria-invalid"] });
  check();
})();
