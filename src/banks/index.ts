// Banks (decisions §5): the bank list and account name enquiry, through the connectors.
import type { Feature } from '../feature.ts';
import { nameEnquirySlotsFor } from '../connectors/name-enquiry-slots.ts';
import { NameEnquiryCache, resolveAccountRoutes } from './resolve.ts';
import { bankRoutes } from './routes.ts';

export const banksFeature: Feature = {
  name: 'banks',
  api(app, { config, orm, providers }) {
    bankRoutes(app, { providers });
    resolveAccountRoutes(app, {
      providers,
      cache: new NameEnquiryCache({ ttlMs: config.NAME_ENQUIRY_CACHE_MS }),
      slots: nameEnquirySlotsFor(orm),
    });
  },
};
