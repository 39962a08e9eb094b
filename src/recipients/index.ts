// Saved recipients (decisions §20): a tenant's bank accounts, saved once after a name enquiry.
import type { Feature } from '../feature.ts';
import { nameEnquirySlotsFor } from '../connectors/name-enquiry-slots.ts';
import { recipientRoutes } from './routes.ts';
import { RecipientService } from './service.ts';
import { Recipient } from './store.ts';

export const recipientsFeature: Feature = {
  name: 'recipients',
  entities: [Recipient],
  api(app, { orm, providers }) {
    recipientRoutes(app, { recipients: new RecipientService({ orm, providers, slots: nameEnquirySlotsFor(orm) }) });
  },
};
