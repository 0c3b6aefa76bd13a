// Forces every listening server of this process onto 127.0.0.1.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const port = args[0];
    const rest = args.slice(1).filter((a) => typeof a === 'function');
    return listen.call(this, { port: Number(port), host: '127.0.0.1' }, ...rest);
  }
  if (args[0] && typeof args[0] === 'object' && !args[0].path) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
