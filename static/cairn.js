// Small enhancements on top of plain HTML forms and links; the portal works without them.
(function () {
  "use strict";

  function csrfToken() {
    var field = document.querySelector('input[name="csrf_token"]');
    return field ? field.value : "";
  }

  // Upload the chosen files one request at a time, so each stays under the
  // per-file limit and the progress bar tells how far the whole batch is.
  // A file over the limit is not sent at all: its refusal is shown at once.
  // What the portal said in an answer that is not the one asked for (its error message, as text), or which
  // status it answered with. ``answer`` is the response already parsed, when the caller has it.
  function portalMessage(xhr, answer) {
    answer = answer || new DOMParser().parseFromString(xhr.responseText || "", "text/html");
    var found = answer.querySelector("[role=alert], .error");
    return found && found.textContent.trim() ? found.textContent.replace(/\s+/g, " ").trim()
      : "the portal answered " + xhr.status + (xhr.statusText ? " " + xhr.statusText : "") + "; try again.";
  }

  function enhanceUpload(form) {
    var limit = Number(form.dataset.fileBytes);  // from portal/ingest/limits.py, as is the message
    var input = form.querySelector('input[type="file"]');
    var box = form.querySelector(".upload-progress");
    var bar = box.querySelector("progress");
    var label = box.querySelector(".upload-label");
    var outcomes = document.getElementById("upload-outcomes");
    var button = form.querySelector('button[type="submit"]');

    // A line of the outcome list the page writes itself: the file's name, then what became of it.
    function outcomeLine(file, outcome, reason, text) {
      var item = document.createElement("li");
      var name = document.createElement("strong");
      item.className = "outcome refused";
      item.dataset.reason = reason;
      item.dataset.outcome = outcome;
      name.textContent = file.name;
      item.append(name, text);
      outcomes.appendChild(item);
    }

    function keepBack(file) {
      var size = (file.size / (1024 * 1024)).toFixed(1) + " MB";
      outcomeLine(file, "refused", "too_large", ": " + form.dataset.notSent.replace("{size}", size));
    }

    // A file whose request ended without an outcome: the connection dropped (the server was stopped or
    // restarted), or the answer is no outcome line (the session ended, so the form is refused as expired;
    // a proxy's error page). Its own line, with its name and the portal's message when there is one,
    // counted as not stored: not as refused for its contents.
    function notStored(file, reason, why) {
      outcomeLine(file, "not_stored", reason, ": not stored — " + why);
    }

    // The link under the summary takes the keyboard (and the eye) to the batch's first refused line.
    var toRefused = box.querySelector(".upload-first-refused");
    var signIn = box.querySelector(".upload-sign-in");
    var firstRefused = null;
    function pointToRefused(line) {
      firstRefused = line || null;
      toRefused.hidden = !firstRefused;
    }
    toRefused.addEventListener("click", function (event) {
      if (!firstRefused) { return; }
      event.preventDefault();
      firstRefused.tabIndex = -1;
      firstRefused.focus();
      firstRefused.scrollIntoView({ block: "center" });
    });

    // Leaving the page stops the files not yet sent: the browser asks first while a batch is being sent.
    var sending = false;
    window.addEventListener("beforeunload", function (event) {
      if (sending) { event.preventDefault(); event.returnValue = ""; }
    });

    form.addEventListener("submit", function (event) {
      var chosen = Array.prototype.slice.call(input.files);
      if (!chosen.length || !window.XMLHttpRequest) { return; }
      event.preventDefault();
      if (outcomes.querySelector("li.outcome")) {
        // A second upload on the page: its lines start under a divider, so the summary (which counts this
        // upload's lines only) and the lines it counts are seen together; the earlier lines stay readable above.
        var divider = document.createElement("li");
        divider.className = "outcome-batch";
        divider.textContent = "Sent at " + new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + ":";
        outcomes.appendChild(divider);
      }
      var earlier = outcomes.children.length;  // the lines of this batch come after these
      function tooLarge(f) { return f.size > limit; }
      var files = chosen.filter(function (f) { return !tooLarge(f); });
      chosen.filter(tooLarge).forEach(keepBack);
      var total = files.reduce(function (sum, f) { return sum + f.size; }, 0) || 1;
      var done = 0;
      sending = true;
      box.hidden = false;
      pointToRefused(null);
      button.disabled = true;
      bar.value = 0;

      function next(index) {
        if (index >= files.length) {
          var batch = Array.prototype.slice.call(outcomes.children, earlier);
          label.textContent = summary(chosen.length, files.length, batch);
          pointToRefused(batch.filter(function (line) {
            return line.dataset.outcome === "refused" || line.dataset.outcome === "not_stored";
          })[0]);
          bar.value = 100;
          sending = false;
          button.disabled = false;
          input.value = "";
          label.focus();  // the button was disabled under the focus: it goes to what the upload came to
          return;
        }
        var file = files[index];
        label.textContent = "Uploading " + file.name + " (" + (index + 1) + " of " + files.length + ")…";
        var data = new FormData();
        // The form's other fields (the CSRF token, who may read) go with every file.
        new FormData(form).forEach(function (value, name) { if (name !== "files") { data.append(name, value); } });
        data.append("files", file, file.name);
        var xhr = new XMLHttpRequest();
        xhr.open("POST", form.action);
        xhr.setRequestHeader("HX-Request", "true");
        xhr.setRequestHeader("HX-Current-URL", window.location.href);  // as htmx sends it: where to come back to
        xhr.setRequestHeader("X-CSRFToken", csrfToken());
        xhr.upload.addEventListener("progress", function (e) {
          if (e.lengthComputable) { bar.value = Math.round(100 * (done + e.loaded) / total); }
        });
        xhr.addEventListener("load", function () {
          done += file.size;
          bar.value = Math.round(100 * done / total);
          // Signed out meanwhile (the portal names the sign-in page): this file and the rest are not stored, and
          // sending them again only after signing in can help; the sign-in page comes back here.
          if (xhr.getResponseHeader("HX-Redirect")) {
            files.slice(index).forEach(function (left) {
              notStored(left, "signed_out", "you were signed out. Sign in again, then send it again.");
            });
            signIn.href = xhr.getResponseHeader("HX-Redirect");
            signIn.hidden = false;
            next(files.length);
            return;
          }
          // The upload's own answers (added, refused: 200, 422, 413) are outcome lines; anything else is not.
          var answer = new DOMParser().parseFromString(xhr.responseText, "text/html");
          if (!answer.querySelector("li.outcome")) {
            notStored(file, "http_" + xhr.status, portalMessage(xhr, answer));
          } else if (window.htmx && htmx.swap) {
            htmx.swap(outcomes, xhr.responseText, { swapStyle: "beforeend" });
          } else {
            outcomes.insertAdjacentHTML("beforeend", xhr.responseText);
          }
          next(index + 1);
        });
        xhr.addEventListener("error", function () {
          // The request may have been cut after the portal stored the file (only its answer was lost):
          // sending it again is safe, an identical file comes back "unchanged".
          notStored(file, "network", "no answer came from the portal (network error). " +
            "If it is not among the documents below, try again.");
          next(index + 1);
        });
        xhr.send(data);
      }
      next(0);
    });
  }

  // "Done: 40 files sent — 18 added, 22 refused.", from the result lines of the batch (_upload_outcomes.html),
  // and ", 2 not stored." when requests ended without an outcome (notStored).
  function summary(chosen, sent, lines) {
    function count(kind) { return lines.filter(function (line) { return line.dataset.outcome === kind; }).length; }
    function files(n) { return n + " file" + (n === 1 ? "" : "s"); }
    var kept = chosen - sent;
    var parts = [count("added") + " added"];
    // in the words of the lines it counts ("new revision as …")
    if (count("revised")) { parts.push(count("revised") + " new revision" + (count("revised") === 1 ? "" : "s")); }
    if (count("unchanged")) { parts.push(count("unchanged") + " unchanged"); }
    parts.push(count("refused") + " refused");
    if (count("not_stored")) { parts.push(count("not_stored") + " not stored"); }
    return "Done: " + (kept ? sent + " of " + files(chosen) + " sent (" + kept + " too large to send)" : files(sent) + " sent") +
      " — " + parts.join(", ") + ".";
  }

  function confirmForms() {
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
      });
    });
  }

  // The cited passage in the document: centred when it fits the window, else its start near the top.
  // Figures carry their size, so the layout is final before they load; the scroll is made again once
  // everything has loaded (web fonts, a late stylesheet) unless the reader has scrolled meanwhile.
  function scrollToCited() {
    if (window.location.hash) { return; }
    var marks = document.querySelectorAll(".doc-body .cited");
    if (!marks.length) { return; }
    var landed = null;
    function place() {
      var top = Infinity, bottom = -Infinity;
      marks.forEach(function (mark) {
        var box = mark.getBoundingClientRect();
        if (box.height) { top = Math.min(top, box.top); bottom = Math.max(bottom, box.bottom); }
      });
      if (top === Infinity) { return; }
      var room = window.innerHeight, height = bottom - top;
      var offset = height <= room * 0.9 ? (room - height) / 2 : room * 0.05;
      window.scrollTo(0, Math.max(0, window.scrollY + top - offset));
      landed = window.scrollY;
    }
    place();
    if (document.readyState === "complete") { return; }
    window.addEventListener("load", function () {
      if (window.scrollY === landed) { place(); }
    }, { once: true });
  }

  // A refusal (422) or a conflict (409: it changed while you read it) carries a message to show in place,
  // like a success does.
  function swapRefusals() {
    document.body.addEventListener("htmx:beforeSwap", function (event) {
      if (event.detail.xhr.status === 422 || event.detail.xhr.status === 409) {
        event.detail.shouldSwap = true;
        event.detail.isError = false;
      }
    });
  }

  // Any other answer htmx does not swap (a 503 "busy", a 500) would leave the page as it
  // was, the question still in its box and no word why: its message is shown, as text, next to the button that
  // sent the request (the top of a long form may be out of view), and goes with the next request that succeeds.
  function showRequestErrors() {
    function placeOf(event) {
      var source = event.detail.elt;
      var form = source && source.closest ? (source.closest("form") || source) : null;
      if (!form || !form.parentNode) { return null; }
      var button = form.querySelector("[type=submit]");
      return button && button.parentNode ? button : form;
    }
    document.body.addEventListener("htmx:responseError", function (event) {
      var place = placeOf(event);
      if (!place) { return; }
      var text = portalMessage(event.detail.xhr);
      text = text.charAt(0).toUpperCase() + text.slice(1);  // it stands alone here, not after a file's name
      var shown = place.previousElementSibling;
      if (!shown || !shown.matches(".request-error")) {
        shown = document.createElement("p");
        shown.className = "error request-error";
        shown.setAttribute("role", "alert");
        place.parentNode.insertBefore(shown, place);
      }
      shown.textContent = text;
      shown.scrollIntoView({ block: "nearest" });
    });
    document.body.addEventListener("htmx:afterRequest", function (event) {
      var place = event.detail.successful && placeOf(event);
      var shown = place && place.previousElementSibling;
      if (shown && shown.matches(".request-error")) { shown.remove(); }
    });
  }

  // The chat: Enter sends (Shift+Enter makes a new line); while the answer is made the pending block shows
  // the question and the seconds elapsed; when it arrives it is scrolled into view and the question box,
  // empty again, has the focus.
  function enhanceChat() {
    var timer = null;
    // What is typed in the question box, and the agent chosen for it, is kept for its page and its user in this tab
    // until an answer arrives: a sign-in that a lapsed session asks for comes back to the page, and a reload, with it
    // still there; another person signing in on the same browser does not see it.
    var DRAFT = "cairn-question";
    function chosenAgent(box) {
      var chosen = box.form && box.form.querySelector("input[name=agent]:checked");
      return chosen ? chosen.value : null;
    }
    function draft() {
      try { return JSON.parse(sessionStorage.getItem(DRAFT) || "null"); } catch (e) { return null; }
    }
    function keepDraft(text, box) {
      try {
        if (text && box) {
          var kept = { path: window.location.pathname, user: box.getAttribute("data-draft-of"), text: text,
                       agent: chosenAgent(box) };
          sessionStorage.setItem(DRAFT, JSON.stringify(kept));
        } else { sessionStorage.removeItem(DRAFT); }
      } catch (e) { /* storage off: nothing is kept */ }
    }
    document.body.addEventListener("input", function (event) {
      var box = event.target;
      if (box.matches && box.matches("textarea[data-enter-sends]")) { keepDraft(box.value, box); }
    });
    document.body.addEventListener("change", function (event) {
      var box = event.target.form && event.target.form.querySelector("textarea[data-enter-sends]");
      if (event.target.name === "agent" && box && box.value) { keepDraft(box.value, box); }
    });
    var box = document.querySelector("textarea[data-enter-sends]");
    var kept = draft();
    if (box && !box.value && kept && kept.path === window.location.pathname &&
        kept.user === box.getAttribute("data-draft-of")) {
      box.value = kept.text;
      var agents = box.form ? box.form.querySelectorAll("input[name=agent]") : [];
      var again = Array.prototype.filter.call(agents, function (radio) { return radio.value === kept.agent; })[0];
      if (again && !chosenAgent(box)) { again.checked = true; }
    }
    document.body.addEventListener("keydown", function (event) {
      var field = event.target;
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || !field.matches("textarea[data-enter-sends]")) { return; }
      event.preventDefault();
      // as Send does: an empty field gets the browser's own note, one of spaces the portal's message
      if (field.form) { field.form.requestSubmit(); }
    });
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      if (event.target.id !== "ask-form") { return; }
      var question = event.target.querySelector("textarea[name=question]");
      var shown = document.querySelector("[data-pending-question]");
      var elapsed = document.querySelector("[data-elapsed]");
      if (shown && question) { shown.textContent = question.value; }
      var started = Date.now();
      clearInterval(timer);
      timer = setInterval(function () {
        if (!elapsed || !document.body.contains(elapsed)) { clearInterval(timer); return; }
        elapsed.textContent = "(" + Math.round((Date.now() - started) / 1000) + " s)";
      }, 1000);
    });
    // A new conversation swaps #chat whole; an answer within one appends its turn and replaces #ask (the
    // question form) out of band; "Show earlier" puts older turns on top and replaces #show-earlier.
    document.body.addEventListener("htmx:load", function (event) {
      var loaded = event.target;
      if (!(loaded instanceof Element)) { return; }
      if (loaded.id === "chat") {
        keepDraft("");  // answered
        showLatestTurn(loaded, true);  // a new conversation: its first answer, where the start page was scrolled
        focusQuestion(loaded);
      } else if (loaded.id === "ask") {
        keepDraft("");
        focusQuestion(loaded);
      } else if (loaded.matches(".turn") && !loaded.nextElementSibling) {
        loaded.scrollIntoView({ block: "start" });  // the new answer, last in the list
      } else if (loaded.id === "show-earlier") {
        var control = loaded.querySelector("a, [tabindex]");  // the link clicked was replaced: keep the place
        if (control) { control.focus({ preventScroll: true }); }
      }
    });
    var chat = document.getElementById("chat");
    if (chat && !window.location.hash) { showLatestTurn(chat); }
  }

  // A status message that arrives inside swapped content (a saved rating, a triage change, a recorded case)
  // is a new element, and screen readers announce a new element far less reliably than a change inside a live
  // region already on the page: its text is repeated in #announce (base.html), which stays across swaps.
  function announceSwappedStatus() {
    var region = document.getElementById("announce");
    if (!region) { return; }
    document.body.addEventListener("htmx:load", function (event) {
      var loaded = event.target;
      if (!(loaded instanceof Element) || loaded === document.body) { return; }
      var found = loaded.matches("[role=status]") ? [loaded] : [];
      found = found.concat(Array.prototype.slice.call(loaded.querySelectorAll("[role=status]")));
      var text = found.filter(function (status) { return status.getClientRects().length > 0; })
        .map(function (status) { return status.textContent.replace(/\s+/g, " ").trim(); })
        .filter(Boolean).join(" ");
      if (!text) { return; }
      region.textContent = "";  // the same message twice in a row is still a change, so it is read again
      window.setTimeout(function () { region.textContent = text; }, 50);
    });
  }

  // A swap that replaces the control that had the focus (a rating button, "Save triage"), or a request that
  // disabled it meanwhile (Ask on an agent's try page), leaves the focus on the body, and a keyboard user back
  // at the top of the page. A link that swapped the list it sits in (a column heading that sorts, a pager's
  // Next) gets its counterpart in the new list: the same heading, Next again (Previous on the last page).
  // Otherwise the focus goes to the status or error message swapped in, or else to the first field or button
  // of the new content, or else to its heading (a run's result). Chat answers place the focus themselves.
  function keepFocusAcrossSwaps() {
    var visible = function (element) { return element.getClientRects().length > 0; };
    var label = function (link) { return link.textContent.replace(/[▲▼]/g, "").replace(/\s+/g, " ").trim(); };
    var followed = null;  // the link whose request is under way, while it has the focus
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      var link = event.detail.elt;
      followed = link instanceof Element && link.matches("a[href]") && link === document.activeElement
        ? { rel: link.getAttribute("rel"), label: label(link) } : null;
    });
    function counterpart(wanted) {
      var links = Array.prototype.filter.call(document.querySelectorAll("main a[hx-get]"), visible);
      var same = function (link) {
        return wanted.rel ? link.getAttribute("rel") === wanted.rel : label(link) === wanted.label;
      };
      var other = { next: "prev", prev: "next" }[wanted.rel];
      return links.filter(same)[0] || links.filter(function (link) { return other && link.getAttribute("rel") === other; })[0];
    }
    document.body.addEventListener("htmx:load", function (event) {
      var loaded = event.target;
      var lost = !document.activeElement || document.activeElement === document.body;
      if (!lost || !(loaded instanceof Element) || loaded === document.body) { return; }
      var link = followed && counterpart(followed);
      if (link) {
        followed = null;
        link.focus({ preventScroll: true });
        return;
      }
      var message = Array.prototype.filter.call(loaded.querySelectorAll("[role=status], [role=alert]"), visible)[0];
      if (message) {
        message.setAttribute("tabindex", "-1");
        message.focus({ preventScroll: true });
        return;
      }
      var control = Array.prototype.filter.call(
        loaded.querySelectorAll("input:not([type=hidden]), select, textarea, button"), visible)[0];
      if (control) { control.focus({ preventScroll: true }); }
    });
    // Last, once every part of the swap is in (a swap may bring several, out of band too): the heading of the
    // content swapped into the target, when nothing above took the focus.
    document.body.addEventListener("htmx:afterSettle", function (event) {
      var target = event.detail.elt;
      var lost = !document.activeElement || document.activeElement === document.body;
      if (!lost || !(target instanceof Element) || target === document.body) { return; }
      var heading = target.matches("h1, h2, h3") ? target : target.querySelector("h1, h2, h3");
      if (heading && visible(heading)) {
        heading.setAttribute("tabindex", "-1");
        heading.focus();  // scrolled into view when the result lands below the fold (a phone)
      }
    });
  }

  // A filter form that applies itself on change (Answer feedback): a date typed digit by digit is a valid date
  // at each digit of its year (0002, 0020, 0202, 2026), and each would filter the list and push an address. A
  // year before 1000 is a date still being typed: its change goes no further than the field.
  function waitForWholeDates() {
    document.body.addEventListener("change", function (event) {
      var field = event.target;
      if (field instanceof HTMLInputElement && field.type === "date" && /^0/.test(field.value)) {
        event.stopPropagation();
      }
    }, true);
  }

  // A new pack's kind and company go together (packs/index.html): choosing "company" picks the company when there is
  // only one to pick, choosing "generic" leaves none; the server still refuses a company pack without its company.
  function kindPicksCompany() {
    document.body.addEventListener("change", function (event) {
      var kind = event.target;
      var company = kind.id === "kind" && kind.form && kind.form.querySelector("select[name=company]");
      if (!company) { return; }
      var companies = Array.prototype.filter.call(company.options, function (option) { return option.value; });
      if (kind.value === "generic") { company.value = ""; }
      else if (kind.value === "company" && !company.value && companies.length === 1) { company.value = companies[0].value; }
    });
  }

  // The phone's menu (base.html, a <details>) closes on Escape, as a menu does, and the focus goes back to
  // "Menu". On a wide screen its items sit in the bar and "Menu" is hidden: nothing to close there.
  function escapeClosesMenu() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || event.defaultPrevented) { return; }
      var menu = document.querySelector("details.menu[open]");
      var summary = menu && menu.querySelector("summary");
      if (!summary || !summary.getClientRects().length) { return; }
      var inside = menu.contains(document.activeElement);
      event.preventDefault();  // this Escape closed the menu, and nothing else
      menu.open = false;
      if (inside) { summary.focus(); }
    });
  }

  // Escape closes the "Not helpful" reasons form as its Cancel does, unless a reason is ticked or a note typed:
  // a key pressed out of habit must not lose them.
  function escapeCancelsRating() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) { return; }
      var form = event.target instanceof Element && event.target.closest(".not-helpful-form");
      if (!form) { return; }
      var note = form.querySelector("textarea");
      if ((note && note.value.trim()) || form.querySelector("input[name=reasons]:checked")) { return; }
      var cancel = form.querySelector("a.cancel-rating");
      if (cancel) { event.preventDefault(); cancel.click(); }
    });
    // Cancel (or Escape) brings the rating buttons back with the focus on "Not helpful", which opened the form,
    // not on the first button of the swap ("Helpful", a press away from rating the answer the other way).
    var cancelled = null;
    document.addEventListener("click", function (event) {
      var cancel = event.target instanceof Element && event.target.closest("a.cancel-rating");
      var rating = cancel && cancel.closest(".rating");
      if (rating) { cancelled = rating.id; }
    });
    document.body.addEventListener("htmx:afterRequest", function (event) {
      if (!event.detail.successful) { cancelled = null; }  // nothing swapped: a later swap is no cancel's
    });
    document.body.addEventListener("htmx:load", function (event) {
      if (!cancelled || !(event.target instanceof Element) || event.target.id !== cancelled) { return; }
      cancelled = null;
      var focused = document.activeElement;
      if (focused && focused !== document.body && !event.target.contains(focused)) { return; }  // moved on
      var reopen = event.target.querySelector(".rate-not-helpful");
      if (reopen) { reopen.focus({ preventScroll: true }); }
    });
  }

  function focusQuestion(container) {
    var field = container.querySelector("textarea[data-enter-sends]");
    if (field) { field.focus({ preventScroll: true }); }
  }

  // An opened conversation of one turn is already at the top of its page; one just started replaced the start
  // page wherever it was scrolled (below its agents, at the question box), so its first turn is brought in too.
  function showLatestTurn(chat, evenTheFirst) {
    var turns = chat.querySelectorAll(".turn");
    if (turns.length > (evenTheFirst ? 0 : 1)) { turns[turns.length - 1].scrollIntoView({ block: "start" }); }
  }

  // A table wider than the screen scrolls within its box (_table_scroll.html), or within itself (a table
  // outside such a box, or a document's table wider than its column: cairn.css), as does a document's code
  // block on a phone: that takes the keyboard focus then, so it can be scrolled without a pointer, and the hint
  // above its box says it scrolls. Only while it scrolls: elsewhere a table or a block is no tab stop.
  function focusableScrollingTables(root) {
    root.querySelectorAll(".table-scroll, table.list, .doc-body.markdown table, .doc-body pre").forEach(function (box) {
      if (box.matches(".table-scroll > table")) { return; }
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls) {
        box.tabIndex = 0;
      } else {
        box.removeAttribute("tabindex");
      }
      var hint = box.previousElementSibling;
      if (hint && hint.matches(".scroll-hint")) { hint.hidden = !scrolls; }
    });
  }

  // A push of the address already shown replaces it: one search answered twice (Enter, or a pause in typing
  // and then Enter) left two identical entries, and the first Back did nothing.
  function noRepeatedHistory() {
    document.body.addEventListener("htmx:beforeHistoryUpdate", function (event) {
      var history = event.detail.history;
      if (history && history.type === "push" && new URL(history.path, location.href).href === location.href) {
        history.type = "replace";
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    noRepeatedHistory();
    focusableScrollingTables(document);
    window.addEventListener("resize", function () { focusableScrollingTables(document); });
    document.body.addEventListener("htmx:afterSettle", function () { focusableScrollingTables(document); });
    swapRefusals();
    showRequestErrors();
    enhanceChat();
    announceSwappedStatus();
    keepFocusAcrossSwaps();
    waitForWholeDates();
    kindPicksCompany();
    escapeClosesMenu();
    escapeCancelsRating();
    document.querySelectorAll("form[data-upload-one-by-one]").forEach(enhanceUpload);
    confirmForms();
    scrollToCited();
  });
})();
