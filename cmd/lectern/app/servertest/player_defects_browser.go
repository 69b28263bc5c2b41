package servertest

// InFramePage is the status line of the content in the player's frame.
const InFramePage = `document.getElementById("frame").contentDocument.getElementById("status").textContent`
