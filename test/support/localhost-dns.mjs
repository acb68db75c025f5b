// A preload for `node --import` in tests that spawn the CLI against fauxqs: its queue URLs name
// sqs.<region>.localhost, which the SDK sends to; this resolves *.localhost to 127.0.0.1.
import { interceptLocalhostDns } from 'fauxqs';

interceptLocalhostDns();
