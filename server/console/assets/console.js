// Lectern console: small behaviour on top of htmx (no inline scripts: the pages' CSP forbids them).
document.addEventListener("htmx:responseError", function (e) {
  var alert = document.getElementById("alert");
  if (alert) {
    alert.textContent = "";
    var p = document.createElement("p");
    p.setAttribute("role", "alert");
    p.className = "error";
    p.textContent = "The request failed (" + e.detail.xhr.status + ").";
    alert.appendChild(p);
  }
});
