// Render the maths of a page with the bundled KaTeX (no network). pymdownx.arithmatex
// (generic mode) leaves inline maths as <span class="arithmatex">\(...\)</span> and display
// maths as <div class="arithmatex">\[...\]</div>.
function renderMaths() {
  document.querySelectorAll(".arithmatex").forEach(function (element) {
    if (element.dataset.rendered) return;
    var tex = element.textContent.trim();
    var display = element.tagName === "DIV";
    tex = tex.replace(/^\\[\(\[]/, "").replace(/\\[\)\]]$/, "");
    katex.render(tex, element, { displayMode: display, throwOnError: false });
    element.dataset.rendered = "1";
  });
}
if (typeof document$ !== "undefined") {
  document$.subscribe(renderMaths);
} else {
  document.addEventListener("DOMContentLoaded", renderMaths);
}
