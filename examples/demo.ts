console.log("phasekit demo: coming up");
