// 知问 web UI entry point. A classic script that loads the page's ES modules (js/main.js), so
// it stays valid for any JavaScript checker; no build step, nothing fetched from outside.
"use strict";
import("/static/js/main.js").catch(function (err) {
  var box = document.getElementById("boot-error");
  if (box) box.textContent = "页面脚本加载失败，请刷新重试（" + err + "）";
});
